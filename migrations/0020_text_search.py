from tortoise import migrations
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


async def trigram_indexes(apps, schema_editor):
    """PostgreSQL: the conversations' search (titles and message text, any part of a word)
    reads trigram indexes instead of every message. SQLite keeps its plain scan."""
    if schema_editor.client.capabilities.dialect == "postgres":
        await schema_editor.client.execute_script(TRIGRAM_INDEXES)


async def drop_trigram_indexes(apps, schema_editor):
    if schema_editor.client.capabilities.dialect == "postgres":
        await schema_editor.client.execute_script(
            "DROP INDEX IF EXISTS idx_chat_message_text; DROP INDEX IF EXISTS idx_chat_session_title_text")


class Migration(migrations.Migration):
    dependencies = [('hermes', '0019_rate_budget_window')]

    initial = False

    operations = [
        ops.RunPython(trigram_indexes, drop_trigram_indexes),
    ]
