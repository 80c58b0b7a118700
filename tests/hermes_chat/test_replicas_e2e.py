"""kill -9 of a replica with three runs in flight, one waiting on clarify (issue 8 §4).

Two `hermes-chat serve` processes on one PostgreSQL database, one external real Bridge (in this
process, its agent calling the scripted LLM), the fake Slack. Three conversations start on
replica A; A is killed with SIGKILL; replica B, already running, takes over all three once
A's 2-second leases expire, finishes the two streaming runs, and takes the clarify click.
And kill -9 of the replica running the upkeep jobs: the other one runs them within a lease
(issue 16 §4).
"""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from bots.slack import ids
from core.chat import sessions
from core.runtime import records
from core.store.models import ChatMessage, ChatMessageLog, ClarifyPause, MessageStatus, PauseStatus, RunLease, utc_now
from tests.bots.slack.harness import SECRET, texts
from tests.bridge.harness import RunningBridge
from tests.conftest import BACKEND
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply
from tests.fakes.slack import FakeSlack
from tests.fakes.slack_payloads import CHANNEL_ID
from tests.support.replicas import (
    about,
    all_shown,
    clarify_question,
    finished_in_slack,
    slack_live_ts,
    has_status,
    log_seqs,
    models_file,
    questions_posted,
    replica,
    resolved,
    rows_stored,
    slack_click,
    slack_mention,
    until,
)
from tests.fakes.changes import WAIT

pytestmark = pytest.mark.skipif(
    BACKEND != "postgres",
    reason="several replicas share PostgreSQL; on SQLite a second replica is refused by design",
)
LEASE_SECONDS = 2
TAKEOVER_DEADLINE = 10.0  # lease expiry (<= 2 s after the kill) + a scan (every 1 s), generously
STORIES = {
    "story one": ("Once upon a time a lighthouse keeper counted ships. " * 6).strip(),
    "story two": ("Far away a baker taught a river to sing at dawn. " * 6).strip(),
}
QUESTION = {"question": "Which colour?", "choices": ["red", "blue"]}


async def _owners(run_ids: list[str]) -> set[str]:
    return set(await RunLease.filter(run_id__in=run_ids).values_list("owner", flat=True))


async def test_kill_9_of_a_replica_with_three_runs_one_on_clarify(
    db: str, bridge: RunningBridge, llm: ScriptedLLM, tmp_path: Path
) -> None:
    gates = {text: asyncio.Event() for text in STORIES}
    llm.script(*(text_reply(story, gate=gates[text], chunk_size=20, match=about(text))
                 for text, story in STORIES.items()),
               tool_reply(ToolCall("clarify", QUESTION), match=about("paint", answered=False)),
               text_reply("Blue it is.", match=about("paint", answered=True)))
    (tmp_path / "skills").mkdir()
    async with FakeSlack(bot_token="xoxb-test") as slack:
        settings = {
            "DATABASE_URL": db, "HERMES_BRIDGE_URL": bridge.url,
            "MODELS_FILE": str(models_file(tmp_path, llm)), "SKILLS_DIR": str(tmp_path / "skills"),
            "SLACK_BOT_TOKEN": "xoxb-test", "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": slack.api_url, "RUN_LEASE_SECONDS": str(LEASE_SECONDS),
        }
        async with replica("A", tmp_path, settings) as a, replica("B", tmp_path, settings) as b, \
                httpx.AsyncClient(timeout=WAIT) as http:
            asked = ["story one", "story two", "paint the shed"]
            threads = [await slack_mention(http, a, text) for text in asked]
            turns: list[ChatMessage] = await until(lambda: all_shown(asked), "live messages", a)
            ids_ = [t.id for t in turns]
            runs = [t.run_id for t in turns]
            await until(questions_posted,
                        "the question posted and its ts stored", a)
            await until(lambda: rows_stored(ids_[:2]), "streamed rows stored", a)
            [owner_a] = await _owners(runs)  # A drives all three
            question = clarify_question(slack, threads[2])
            assert question is not None

            a.process.kill()  # SIGKILL: no clean-up of any kind
            await a.process.wait()
            killed = time.monotonic()
            owners = await until(lambda: _taken_over(runs, owner_a), "B owns all three", b,
                                 deadline=TAKEOVER_DEADLINE)
            takeover = time.monotonic() - killed
            print(f"B took over A's three runs {takeover:.2f} s after the kill")

            for gate in gates.values():
                gate.set()
            for message_id in ids_[:2]:
                await until(lambda: has_status(message_id, MessageStatus.SUCCESS), "stories done", b)
            await slack_click(http, b, question, ids.choice_action(1))  # the click lands on B
            await until(lambda: has_status(ids_[2], MessageStatus.SUCCESS), "answered run done", b)
            for thread in threads:
                await until(lambda: resolved(finished_in_slack(slack, thread)),
                            "answers shown in Slack", b)
            await until(lambda: resolved("answered by <@U0ALICE>: blue" in texts(
                slack.message(CHANNEL_ID, question.ts))), "the question shows its answer", b)

    assert len(owners) == 1 and owners != {owner_a}
    assert takeover < TAKEOVER_DEADLINE, takeover
    for turn, text in zip(turns[:2], STORIES, strict=True):
        assert (await ChatMessage.get(id=turn.id)).content == STORIES[text]
    assert (await ChatMessage.get(id=ids_[2])).content == "Blue it is."
    for message_id in ids_:
        seqs = await log_seqs(message_id)
        assert seqs == list(range(1, len(seqs) + 1)), seqs  # every row exactly once, no gap
        assert await ChatMessageLog.filter(message_id=message_id, kind="done").count() == 1
    for thread, turn in zip(threads, turns, strict=True):
        bot = [m for m in slack.thread(CHANNEL_ID, thread) if m.bot_id]
        live_ts = await slack_live_ts(turn)
        assert [m.ts for m in finished_in_slack(slack, thread)] == [live_ts]  # the same message
        assert len(bot) == (2 if thread == threads[2] else 1)  # plus the question, once
    assert await RunLease.filter(run_id__in=runs).count() == 0  # released as each finished


async def _taken_over(runs: list[str], dead: str) -> set[str] | None:
    owners = await _owners(runs)
    rows = await RunLease.filter(run_id__in=runs).count()
    return owners if rows == len(runs) and dead not in owners else None


HANDOVER_LEASE = 4  # seconds; each replica tries the scheduler lock every half lease


async def test_kill_9_of_the_scheduler_leader_hands_the_jobs_to_the_other_replica_in_a_lease(
    db: str, bridge: RunningBridge, llm: ScriptedLLM, tmp_path: Path
) -> None:
    (tmp_path / "skills").mkdir()
    settings = {
        "DATABASE_URL": db, "HERMES_BRIDGE_URL": bridge.url,
        "MODELS_FILE": str(models_file(tmp_path, llm)), "SKILLS_DIR": str(tmp_path / "skills"),
        "RUN_LEASE_SECONDS": str(HANDOVER_LEASE),
    }
    async with replica("A", tmp_path, settings) as a:
        await until(lambda: resolved("this replica runs the upkeep jobs" in a.output()),
                    "A leads", a)
        async with replica("B", tmp_path, settings) as b:
            assert "another replica runs the upkeep jobs" in b.output()
            # A question older than the retention, stored after A's jobs ran at its start:
            # A would expire it in an hour; whoever runs the jobs next expires it at once.
            pause = await _ancient_pause()
            a.process.kill()  # SIGKILL: no clean-up of any kind
            await a.process.wait()
            killed = time.monotonic()
            await until(lambda: _is_expired(pause), "B ran the upkeep jobs", a, b,
                        deadline=HANDOVER_LEASE)
            handover = time.monotonic() - killed
            print(f"B ran the upkeep jobs {handover:.2f} s after the leader's kill -9")
            assert "this replica runs the upkeep jobs from now on" in b.output()
    assert handover < HANDOVER_LEASE


async def _ancient_pause() -> int:
    session = (await sessions.create_session()).id
    turn = await records.insert_turn(session, "run-ancient", MessageStatus.SUCCESS, text="?")
    pause = await ClarifyPause.create(run_id="run-ancient", message_id=turn.assistant.id,
                                      clarify_id="ancient", question="?",
                                      created_at=utc_now() - timedelta(days=31))
    return pause.id


async def _is_expired(pause_id: int) -> bool:
    return await ClarifyPause.filter(id=pause_id, status=PauseStatus.EXPIRED).exists()
