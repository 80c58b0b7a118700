"""The durable turns of tests/hermes_chat/test_durable_e2e.py, for the tests that stop `serve`
in other ways too (test_stop_signals.py): two conversations in flight on one `serve`, one
streaming (its model call held open) and one waiting on a clarify question, then both finished
on the next `serve`, each whole, every log row once, in the same Slack messages."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil

from bots.slack import ids
from core.store.models import ChatMessage, ChatMessageLog, ClarifyPause, MessageStatus, PauseStatus
from tests.bots.slack.harness import SECRET, texts
from tests.conftest import TEST_CONFIG_YAML
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply
from tests.fakes.slack import FakeSlack
from tests.fakes.slack_payloads import CHANNEL_ID
from tests.support.processes import free_port
from tests.support.replicas import (
    Replica,
    about,
    all_shown,
    clarify_question,
    finished_in_slack,
    slack_live_ts,
    has_status,
    log_seqs,
    models_file,
    questions_posted,
    resolved,
    rows_stored,
    slack_click,
    slack_mention,
    until,
)

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
    llm.script(text_reply(STORY[:60], gate=gate, chunk_size=20, match=about("story")),
               text_reply(STORY, chunk_size=20, match=about("story")),
               tool_reply(ToolCall("clarify", QUESTION, call_id="call-ask"),
                          match=about("paint", answered=False)),
               text_reply("Blue it is.", match=about("paint", answered=True)))
    (tmp_path / "skills").mkdir()
    (tmp_path / "hermes").mkdir()
    (tmp_path / "hermes" / "config.yaml").write_text(TEST_CONFIG_YAML, encoding="utf-8")
    async with FakeSlack(bot_token="xoxb-test") as slack, \
            httpx.AsyncClient(timeout=60.0) as http:
        settings = {
            "DATABASE_URL": db, "BRIDGE_PORT": str(free_port()),
            "MODELS_FILE": str(models_file(tmp_path, llm)), "SKILLS_DIR": str(tmp_path / "skills"),
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
    threads = [await slack_mention(w.http, serve, text) for text in ASKED]
    turns: list[ChatMessage] = await until(lambda: all_shown(ASKED), "live messages", serve)
    await until(questions_posted,
                "the question posted and its ts stored", serve)
    await until(lambda: rows_stored([turns[0].id]), "streamed rows stored", serve)
    question = clarify_question(w.slack, threads[1])
    assert question is not None
    return InFlight(threads, turns, question.ts)


async def both_finish(w: World, serve: Replica, flight: InFlight) -> None:
    """The story ends whole; the old button, clicked now, finishes the other turn."""
    story, painting = (t.id for t in flight.turns)
    await until(lambda: has_status(story, MessageStatus.SUCCESS), "the story done", serve)
    question = w.slack.message(CHANNEL_ID, flight.question_ts)
    await slack_click(w.http, serve, question, ids.choice_action(1))  # the button posted before
    await until(lambda: has_status(painting, MessageStatus.SUCCESS), "the answered turn done", serve)
    for thread in flight.threads:
        await until(lambda: _done_in_slack(w.slack, thread), "answers shown in Slack", serve)
    await until(lambda: _shown(w.slack, flight.question_ts, "answered by <@U0ALICE>: blue"),
                "the question shows its answer", serve)


async def check_outcome(w: World, flight: InFlight) -> None:
    story, painting = flight.turns
    assert (await ChatMessage.get(id=story.id)).content == STORY
    assert (await ChatMessage.get(id=painting.id)).content == "Blue it is."
    for turn in flight.turns:
        seqs = await log_seqs(turn.id)
        assert seqs == list(range(1, len(seqs) + 1)), seqs  # every row exactly once, no gap
        assert await ChatMessageLog.filter(message_id=turn.id, kind="done").count() == 1
        assert await ChatMessageLog.filter(message_id=turn.id, kind="status",
                                           meta_json__contains="resumed").count() == 1
    for thread, turn in zip(flight.threads, flight.turns, strict=True):
        live_ts = await slack_live_ts(turn)
        assert [m.ts for m in finished_in_slack(w.slack, thread)] == [live_ts]  # same message
    pause = await ClarifyPause.get(message_id=painting.id)
    assert (pause.status, pause.answer) == (PauseStatus.ANSWERED, "blue")
    result = next(m for r in w.llm.requests if "paint" in json.dumps(r)
                  for m in r["messages"] if m.get("role") == "tool")
    assert result["tool_call_id"] == "call-ask"
    assert json.loads(result["content"])["user_response"] == "blue"


async def bridge_process(w: World, serve: Replica) -> dict[str, object]:
    health = (await w.http.get(f"{serve.url}/api/health")).json()
    return health["bridgeProcess"]


async def kill_9(w: World, serve: Replica) -> None:
    """SIGKILL to `serve` and its Bridge child (no clean-up of any kind); returns once both
    are gone."""
    child = (await bridge_process(w, serve))["pid"]
    assert isinstance(child, int)
    os.kill(child, signal.SIGKILL)
    serve.process.kill()
    await serve.process.wait()
    await until(lambda: resolved(not psutil.pid_exists(child) or
                                 psutil.Process(child).status() == psutil.STATUS_ZOMBIE),
                "the Bridge gone", serve)


async def restarted(w: World, serve: Replica, old_instance: object) -> bool:
    child = await bridge_process(w, serve)
    return child["state"] == "running" and child["instance"] != old_instance


def _done_in_slack(slack: FakeSlack, thread: str) -> Awaitable[object]:
    return resolved(finished_in_slack(slack, thread))


def _shown(slack: FakeSlack, ts: str, text: str) -> Awaitable[object]:
    return resolved(text in texts(slack.message(CHANNEL_ID, ts)))
