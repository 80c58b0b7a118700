"""A turn's Slack messages move to where every platform records a turn: its user message.

Until now Slack kept a turn's `Slot` on each version of the answer (Discord already kept its
turn on the user message). The versions of an answer show in the same Slack message, so one
record serves them all: the active version's (else the newest's) moves to the user message,
its `final` flag becoming the id of the answer it was true of; the answers keep the rest of
their refs.
"""

import json
from typing import Any

from tortoise import migrations
from tortoise.migrations import operations as ops

SLACK = "slack"


def _loaded(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        value = json.loads(value)
    return value if isinstance(value, dict) else {}


async def _move_slack_turns(apps: Any, schema_editor: Any) -> None:
    client = schema_editor.client
    postgres = client.capabilities.dialect == "postgres"
    mark, json_mark = ("$1", "$1::jsonb") if postgres else ("?", "?")
    second = "$2" if postgres else "?"
    rows = await client.execute_query_dict(
        "SELECT id, parent_id, is_active, platform_refs FROM chat_message "
        "WHERE role = 'ASSISTANT' AND platform_refs IS NOT NULL ORDER BY id")
    chosen: dict[int, tuple[bool, int, dict[str, Any]]] = {}
    for row in rows:
        refs = _loaded(row["platform_refs"])
        slot = refs.pop(SLACK, None)
        if not isinstance(slot, dict):
            continue
        slot["final"] = row["id"] if slot.get("final") is True else None
        key = (bool(row["is_active"]), row["id"])
        if row["parent_id"] is not None and (row["parent_id"] not in chosen
                                             or key > chosen[row["parent_id"]][:2]):
            chosen[row["parent_id"]] = (*key, slot)
        await client.execute_query(
            f"UPDATE chat_message SET platform_refs = {json_mark} WHERE id = {second}",
            [json.dumps(refs) if refs else None, row["id"]])
    for user_id, (_, _, slot) in chosen.items():
        found = await client.execute_query_dict(
            f"SELECT platform_refs FROM chat_message WHERE id = {mark}", [user_id])
        if not found:
            continue
        refs = _loaded(found[0]["platform_refs"])
        refs.setdefault(SLACK, slot)
        await client.execute_query(
            f"UPDATE chat_message SET platform_refs = {json_mark} WHERE id = {second}",
            [json.dumps(refs), user_id])


class Migration(migrations.Migration):
    dependencies = [('hermes', '0016_discord_shard_claim')]

    initial = False

    operations = [
        ops.RunPython(_move_slack_turns, ops.RunPython.noop),
    ]
