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
    from tortoise import Tortoise
    from tortoise.migrations.api import migrate as tortoise_migrate
    from core.chat import sessions, tree
    from core.store import db
    from core.store.models import ChatMessage, MessageStatus

    async def main(url):
        await tortoise_migrate(config=db.tortoise_config(url), target=sys.argv[2])
        await Tortoise.close_connections()
        await db.open_database(url)
        s = await sessions.create_session()
        u = await tree.append_user(s.id, "q", platform_message_id="1.0",
                                   platform_refs={"discord": {"channel": "9"}})
        slot = {"team": "T", "channel": "C", "thread_ts": "1.0", "followups": []}
        old = await tree.append_assistant(s.id, u.id, status=MessageStatus.SUCCESS, run_id="r1",
            platform_refs={"slack": {**slot, "ts": "1.1", "final": True}, "other": {"x": 1}})
        new = await tree.regenerate(old.id, s.id, MessageStatus.SUCCESS, run_id="r2",
            platform_refs={"slack": {**slot, "ts": "1.2", "final": True}})
        await tree.activate(new.id, s.id)
        summary = await ChatMessage.create(session_id=s.id, parent_id=new.id, role="SYSTEM",
            status=MessageStatus.SUCCESS, platform_refs={"slack": {"team": "T", "channel": "C",
                                                                   "ts": "1.3"}})
        await db.close_database()
        applied = await db.migrate(url)
        await db.open_database(url)
        from bots.slack.refs import slot_of
        rows = {m.id: m.platform_refs for m in await ChatMessage.all()}
        found = [await slot_of(i) for i in (u.id, old.id, new.id)]
        print(json.dumps({"applied": applied, "ids": [u.id, old.id, new.id, summary.id],
                          "rows": {str(k): v for k, v in rows.items()},
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
    user, old, new, summary = out["ids"]
    rows = out["rows"]
    assert out["applied"][0] == "hermes.0017_turn_refs_on_user"
    # The active version's record, its `final` now the answer it was true of; Discord's kept.
    assert rows[str(user)]["discord"] == {"channel": "9"}
    assert rows[str(user)]["slack"]["ts"] == "1.2" and rows[str(user)]["slack"]["final"] == new
    assert rows[str(old)] == {"other": {"x": 1}} and rows[str(new)] is None
    assert rows[str(summary)] == {"slack": {"team": "T", "channel": "C", "ts": "1.3"}}
    assert out["found"] == [["1.2", new]] * 3  # the user message and each version find it
