"""Durable turns with real processes (issue 12 §1, §2): `hermes-chat serve` with its own child
Bridge, the fake Slack, the scripted LLM. Two conversations are in flight, one streaming (its
model call held open) and one waiting on a clarify question; then serve gets SIGTERM and is
started again, or the Bridge process is killed with SIGKILL while serve lives, or both are.
Each time the streaming run ends SUCCESS with its whole answer and every log row once, and the
clarify button posted before the restart, clicked after it, finishes that turn in the same Slack
message."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil

from bots.slack import ids
from core.models import ChatMessage, ChatMessageLog, ClarifyPause, MessageStatus, PauseStatus
from tests.bots.slack.harness import SECRET, texts
from tests.conftest import TEST_CONFIG_YAML
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply
from tests.fakes.slack import FakeSlack
from tests.fakes.slack_payloads import CHANNEL_ID
from tests.hermes_chat.test_replicas_e2e import (
    Replica,
    _about,
    _all_shown,
    _click,
    _finished_in_slack,
    _is,
    _mention,
    _models_file,
    _question,
    _rows_stored,
    _seqs,
    _until,
    replica,
)
from tests.hermes_chat.test_serve import _free_port

STORY = ("Once upon a time a lighthouse keeper counted ships. " * 6).strip()
QUESTION = {"question": "Which colour?", "choices": ["red", "blue"]}
ASKED = ["story one", "paint the shed"]


@dataclass
class World:
    """What outlives one serve process: the fake Slack, the LLM, the settings, the gate."""

    tmp_path: Path
    slack: FakeSlack
    llm: ScriptedLLM
    settings: dict[str, str]
    gate: asyncio.Event
    http: httpx.AsyncClient


@asynccontextmanager
async def world(db: str, llm: ScriptedLLM, tmp_path: Path) -> AsyncIterator[World]:
    gate = asyncio.Event()
    llm.script(text_reply(STORY[:60], gate=gate, chunk_size=20, match=_about("story")),
               text_reply(STORY, chunk_size=20, match=_about("story")),
               tool_reply(ToolCall("clarify", QUESTION, call_id="call-ask"),
                          match=_about("paint", answered=False)),
               text_reply("Blue it is.", match=_about("paint", answered=True)))
    (tmp_path / "skills").mkdir()
    (tmp_path / "hermes").mkdir()
    (tmp_path / "hermes" / "config.yaml").write_text(TEST_CONFIG_YAML, encoding="utf-8")
    async with FakeSlack(bot_token="xoxb-test") as slack, \
            httpx.AsyncClient(timeout=60.0) as http:
        settings = {
            "DATABASE_URL": db, "BRIDGE_PORT": str(_free_port()),
            "MODELS_FILE": str(_models_file(tmp_path, llm)), "SKILLS_DIR": str(tmp_path / "skills"),
            "SLACK_BOT_TOKEN": "xoxb-test", "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": slack.api_url, "RUN_LEASE_SECONDS": "2",
        }
        try:
            yield World(tmp_path, slack, llm, settings, gate, http)
        finally:
            gate.set()


@dataclass
class InFlight:
    threads: list[str]
    turns: list[ChatMessage]
    question_ts: str


async def two_runs_in_flight(w: World, serve: Replica) -> InFlight:
    """One run streaming (its model call held), one waiting on its question in Slack."""
    threads = [await _mention(w.http, serve, text) for text in ASKED]
    turns: list[ChatMessage] = await _until(lambda: _all_shown(ASKED), "live messages", serve)
    await _until(lambda: ClarifyPause.exclude(platform_refs=None).exists(),
                 "the question posted and its ts stored", serve)
    await _until(lambda: _rows_stored([turns[0].id]), "streamed rows stored", serve)
    question = _question(w.slack, threads[1])
    assert question is not None
    return InFlight(threads, turns, question.ts)


async def both_finish(w: World, serve: Replica, flight: InFlight) -> None:
    """The story ends whole; the old button, clicked now, finishes the other turn."""
    story, painting = (t.id for t in flight.turns)
    await _until(lambda: _is(story, MessageStatus.SUCCESS), "the story done", serve)
    question = w.slack.message(CHANNEL_ID, flight.question_ts)
    await _click(w.http, serve, question, ids.choice_action(1))  # the button posted before
    await _until(lambda: _is(painting, MessageStatus.SUCCESS), "the answered turn done", serve)
    for thread in flight.threads:
        await _until(lambda: _done_in_slack(w.slack, thread), "answers shown in Slack", serve)
    await _until(lambda: _shown(w.slack, flight.question_ts, "answered by <@U0ALICE>: blue"),
                 "the question shows its answer", serve)


async def check_outcome(w: World, flight: InFlight) -> None:
    story, painting = flight.turns
    assert (await ChatMessage.get(id=story.id)).content == STORY
    assert (await ChatMessage.get(id=painting.id)).content == "Blue it is."
    for turn in flight.turns:
        seqs = await _seqs(turn.id)
        assert seqs == list(range(1, len(seqs) + 1)), seqs  # every row exactly once, no gap
        assert await ChatMessageLog.filter(message_id=turn.id, kind="done").count() == 1
        assert await ChatMessageLog.filter(message_id=turn.id, kind="status",
                                           meta_json__contains="resumed").count() == 1
    for thread, turn in zip(flight.threads, flight.turns, strict=True):
        live_ts = turn.platform_refs["slack"]["ts"]
        assert [m.ts for m in _finished_in_slack(w.slack, thread)] == [live_ts]  # same message
    pause = await ClarifyPause.get(message_id=painting.id)
    assert (pause.status, pause.answer) == (PauseStatus.ANSWERED, "blue")
    result = next(m for r in w.llm.requests if "paint" in json.dumps(r)
                  for m in r["messages"] if m.get("role") == "tool")
    assert result["tool_call_id"] == "call-ask"
    assert json.loads(result["content"])["user_response"] == "blue"


async def across_a_new_serve(w: World, stop: Callable[[World, Replica], Awaitable[None]]) -> None:
    """Two runs in flight on one serve, `stop` it, finish both on the next serve."""
    async with replica("first", w.tmp_path, w.settings) as first:
        flight = await two_runs_in_flight(w, first)
        await stop(w, first)
    async with replica("second", w.tmp_path, w.settings) as second:
        await both_finish(w, second, flight)
    await check_outcome(w, flight)


async def test_sigterm_of_serve_then_a_new_serve_loses_no_run(
    db: str, llm: ScriptedLLM, tmp_path: Path
) -> None:
    async def sigterm(_: World, first: Replica) -> None:
        first.process.send_signal(signal.SIGTERM)  # a deploy: the child Bridge goes too
        assert await asyncio.wait_for(first.process.wait(), 60) == 0, first.output()

    async with world(db, llm, tmp_path) as w:
        await across_a_new_serve(w, sigterm)


async def test_kill_9_of_the_bridge_with_serve_alive_loses_no_run(
    db: str, llm: ScriptedLLM, tmp_path: Path
) -> None:
    async with world(db, llm, tmp_path) as w:
        async with replica("serve", tmp_path, w.settings) as serve:
            flight = await two_runs_in_flight(w, serve)
            before = await _bridge_process(w, serve)
            os.kill(before["pid"], signal.SIGKILL)
            await _until(lambda: _restarted(w, serve, before["instance"]),
                         "the supervisor restarted the Bridge", serve)
            await both_finish(w, serve, flight)
        await check_outcome(w, flight)


async def test_kill_9_of_serve_and_its_bridge_then_a_new_serve_loses_no_run(
    db: str, llm: ScriptedLLM, tmp_path: Path
) -> None:
    async def kill_both(w: World, first: Replica) -> None:
        child = (await _bridge_process(w, first))["pid"]
        os.kill(child, signal.SIGKILL)
        first.process.kill()  # SIGKILL: no clean-up of any kind
        await first.process.wait()
        await _until(lambda: _async(not psutil.pid_exists(child) or
                                    psutil.Process(child).status() == psutil.STATUS_ZOMBIE),
                     "the Bridge gone", first)

    async with world(db, llm, tmp_path) as w:
        await across_a_new_serve(w, kill_both)


async def _bridge_process(w: World, serve: Replica) -> dict[str, object]:
    health = (await w.http.get(f"{serve.url}/api/health")).json()
    return health["bridgeProcess"]


async def _restarted(w: World, serve: Replica, old_instance: object) -> bool:
    child = await _bridge_process(w, serve)
    return child["state"] == "running" and child["instance"] != old_instance


def _done_in_slack(slack: FakeSlack, thread: str) -> Awaitable[object]:
    return _async(_finished_in_slack(slack, thread))


def _shown(slack: FakeSlack, ts: str, text: str) -> Awaitable[object]:
    return _async(text in texts(slack.message(CHANNEL_ID, ts)))


async def _async(value: object) -> object:
    return value


