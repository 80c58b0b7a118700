"""The load scenario at test size: the bench's own code path (`python -m bench.load`, a child
process) with 10 conversations on this process's database, checked here afterwards. Timings
are the bench's business (bench/README.md); this test asserts none of them."""

from __future__ import annotations

import json
from collections import Counter

from core.store.models import ChatMessage, ChatMessageLog, MessageStatus, Role

from bench.load.script import answer
from tests.load.child import run_module

CONVERSATIONS = 10
DEADLINE = 240.0  # seconds for the whole child process; it usually takes well under a minute


async def run_bench(database_url: str) -> dict:
    returncode, out, err = await run_module(
        "bench.load", "--conversations", str(CONVERSATIONS), "--database", database_url,
        "--deadline", "120", "--json", deadline=DEADLINE)
    lines = out.strip().splitlines()
    assert lines, f"no figures printed (exit {returncode}):\n{err[-4000:]}"
    return json.loads(lines[-1])


async def test_ten_conversations_on_slack_and_discord_all_complete_within_the_limits(db: str):
    figures = await run_bench(db)

    assert figures["problems"] == []
    assert figures["completed"] == CONVERSATIONS
    assert figures["rate_limited"] == 0
    answers = await ChatMessage.filter(role=Role.ASSISTANT).order_by("id")
    assert len(answers) == CONVERSATIONS
    assert all(a.status == MessageStatus.SUCCESS for a in answers)
    assert sorted(a.content for a in answers) == sorted(answer(n) for n in range(1, CONVERSATIONS + 1))
    rows = await ChatMessageLog.all().values_list("message_id", "seq", "kind")
    assert len(rows) == figures["log_rows"]
    seqs = Counter((message_id, seq) for message_id, seq, _ in rows)
    assert max(seqs.values()) == 1, "a log row stored twice"
    for message in answers:
        mine = sorted((seq, kind) for message_id, seq, kind in rows if message_id == message.id)
        assert [seq for seq, _ in mine] == list(range(1, len(mine) + 1)), "a log row missing"
        assert mine[-1][1] == "done"


BURST = 6  # conversations of the one-workspace burst at test size (fewer than Tier 2's 20)


async def test_a_one_workspace_burst_streams_its_turns_first_come_first_served(db: str):
    """`bench.load --slack-burst`: every conversation on Slack in one workspace within a
    second, the model thinking before each answer. Every turn streams (the burst is within
    Tier 2's window), nothing is refused 429, and the figures say so."""
    returncode, out, err = await run_module(
        "bench.load", "--slack-burst", "--conversations", str(BURST), "--ramp", "1",
        "--database", db, "--deadline", "120", "--json", deadline=DEADLINE)
    lines = out.strip().splitlines()
    assert lines, f"no figures printed (exit {returncode}):\n{err[-4000:]}"
    figures = json.loads(lines[-1])

    assert figures["problems"] == [] and returncode == 0
    assert figures["completed"] == BURST and figures["rate_limited"] == 0
    assert figures["streamed"] == figures["streamed_first"] == BURST
    assert figures["slack_settled_s"] is not None
    assert await ChatMessage.filter(role=Role.ASSISTANT, status=MessageStatus.SUCCESS).count() == BURST
