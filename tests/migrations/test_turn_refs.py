"""0017 moves a turn's Slack record from its answers to its user message, where every
platform now records a turn: a database written by the earlier code, migrated by a real
`migrate` in a child process (the migrations open their own connections)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import new_database

pytestmark = [pytest.mark.db, pytest.mark.backend]

BEFORE = "hermes.0016_discord_shard_claim"

SCRIPT = textwrap.dedent("""
    import asyncio, json, sys
    from tortoise import Tortoise, connections
    from tortoise.migrations.api import migrate as tortoise_migrate
    from core.store import db
    from core.store.models import ChatMessage

    SLOT = {"team": "T", "channel": "C", "thread_ts": "1.0", "followups": []}
    ROWS = [  # id, parent, active, order, role, platform_refs: as the code of 0016 wrote them
        (1, None, True, 0, "USER", {"discord": {"channel": "9"}}),
        (2, 1, False, 0, "ASSISTANT", {"slack": {**SLOT, "ts": "1.1", "final": True},
                                       "other": {"x": 1}}),
        (3, 1, True, 1, "ASSISTANT", {"slack": {**SLOT, "ts": "1.2", "final": True}}),
        (4, 3, True, 0, "SYSTEM", {"slack": {"team": "T", "channel": "C", "ts": "1.3"}}),
    ]

    async def main(url):
        config = db.tortoise_config(url)
        await tortoise_migrate(config=config, target=sys.argv[2])
        await Tortoise.init(config=config)
        conn = connections.get("default")
        pg = url.startswith("postgres")
        marks = [f"${n}" if pg else "?" for n in range(1, 7)]
        await conn.execute_query(
            "INSERT INTO chat_session (uuid, hermes_session, status, created_at, "
            "last_message_at, updated_at) VALUES ('6f1c2a9e-0000-4000-8000-000000000001', "
            "'chat-x', 'ACTIVE', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)")
        for row in ROWS:
            await conn.execute_query(
                "INSERT INTO chat_message (id, session_id, parent_id, is_active, branch_order, "
                "role, content, status, created_at, platform_refs) VALUES "
                f"({marks[0]}, 1, {marks[1]}, {marks[2]}, {marks[3]}, {marks[4]}, '', 'SUCCESS', "
                f"CURRENT_TIMESTAMP, {marks[5]}{'::jsonb' if pg else ''})",
                [*row[:5], json.dumps(row[5])])
        await Tortoise.close_connections()
        applied = await db.migrate(url)
        await db.open_database(url)
        from bots.slack.refs import slot_of
        rows = {m.id: m.platform_refs for m in await ChatMessage.all()}
        found = [await slot_of(i) for i in (1, 2, 3)]
        print(json.dumps({"applied": applied, "rows": {str(k): v for k, v in rows.items()},
                          "found": [(f.ts, f.final) if f else None for f in found]}))
        await db.close_database()

    asyncio.run(main(sys.argv[1]))
""")


async def test_a_slack_turn_moves_to_its_user_message(tmp_path: Path) -> None:
    async with new_database(tmp_path) as url:
        done = subprocess.run([sys.executable, "-c", SCRIPT, url, BEFORE], capture_output=True,
                              text=True, timeout=120, cwd=Path(__file__).parents[2])
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    user, old, new, summary = 1, 2, 3, 4
    rows = out["rows"]
    assert out["applied"][0] == "hermes.0017_turn_refs_on_user"
    # The active version's record, its `final` now the answer it was true of; Discord's kept.
    assert rows[str(user)]["discord"] == {"channel": "9"}
    assert rows[str(user)]["slack"]["ts"] == "1.2" and rows[str(user)]["slack"]["final"] == new
    assert rows[str(old)] == {"other": {"x": 1}} and rows[str(new)] is None
    assert rows[str(summary)] == {"slack": {"team": "T", "channel": "C", "ts": "1.3"}}
    assert out["found"] == [["1.2", new]] * 3  # the user message and each version find it
