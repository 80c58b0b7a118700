from tortoise import fields, migrations
from tortoise.migrations import operations as ops

# The expressions are those the search's `icontains` writes (core/chat/sessions.py,
# `UPPER(CAST(x AS VARCHAR)) LIKE UPPER(...)`), so the planner can use the indexes for it.
TRIGRAM_INDEXES = (
    "CREATE EXTENSION IF NOT EXISTS pg_trgm;"
    " CREATE INDEX IF NOT EXISTS idx_chat_message_text ON chat_message"
    " USING gin (upper(CAST(content AS VARCHAR)) gin_trgm_ops);"
    " CREATE INDEX IF NOT EXISTS idx_chat_session_title_text ON chat_session"
    " USING gin (upper(CAST(title AS VARCHAR)) gin_trgm_ops)"
)
# The newest active message of a session (where its branch ends) and the people who wrote in
# it (the console's person filter), on both backends.
PLAIN_INDEXES = (
    "CREATE INDEX IF NOT EXISTS idx_chat_message_newest ON chat_message (session_id, id)"
    " WHERE is_active AND role <> 'SYSTEM';"
    " CREATE INDEX IF NOT EXISTS idx_chat_message_author ON chat_message (author)"
)


async def search_indexes(apps, schema_editor):
    """PostgreSQL: the conversations' search (titles and message text, any part of a word)
    reads trigram indexes instead of every message. SQLite keeps its plain scan."""
    client = schema_editor.client
    await client.execute_script(PLAIN_INDEXES)
    if client.capabilities.dialect == "postgres":
        await client.execute_script(TRIGRAM_INDEXES)


async def drop_search_indexes(apps, schema_editor):
    client = schema_editor.client
    await client.execute_script("DROP INDEX IF EXISTS idx_chat_message_newest;"
                                " DROP INDEX IF EXISTS idx_chat_message_author")
    if client.capabilities.dialect == "postgres":
        await client.execute_script("DROP INDEX IF EXISTS idx_chat_message_text;"
                                    " DROP INDEX IF EXISTS idx_chat_session_title_text")


async def mark_switched_branches(apps, schema_editor):
    """A session with versions may show an older one (a version switch): where its branch ends
    is written down, as `tree.activate` now does. Without versions the newest message ends it."""
    from core.chat.branch import Node, walk_active

    client = schema_editor.client
    _, sessions = await client.execute_query(
        "SELECT DISTINCT session_id FROM chat_message WHERE NOT is_active")
    for (session_id,) in [tuple(row) for row in sessions]:
        _, rows = await client.execute_query(
            "SELECT id, parent_id, role, is_active, branch_order FROM chat_message"
            f" WHERE session_id = {int(session_id)}")
        nodes = [Node(*tuple(row)) for row in rows]
        branch = [n.id for n in walk_active(nodes) if n.role != "SYSTEM"]
        leaf = branch[-1] if branch else "NULL"
        await client.execute_script(
            f"UPDATE chat_session SET leaf_id = {leaf}, leaf_mark = {max(n.id for n in nodes)}"
            f" WHERE id = {int(session_id)}")


class Migration(migrations.Migration):
    dependencies = [('hermes', '0022_channel_settings')]

    initial = False

    operations = [
        ops.AddField(model_name='ChatSession', name='leaf_id', field=fields.BigIntField(null=True)),
        ops.AddField(model_name='ChatSession', name='leaf_mark', field=fields.BigIntField(null=True)),
        ops.RunPython(search_indexes, drop_search_indexes),
        ops.RunPython(mark_switched_branches, ops.RunPython.noop),
    ]
