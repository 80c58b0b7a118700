"""A busy thread's queue across a restart, with real processes: `hermes-chat serve` with its
child Bridge, the fake Slack and the scripted LLM. In a channel whose settings queue a message
sent while the thread's run works, a message queued behind a run whose model call is held
open is in the database when `serve` is killed (SIGKILL: no clean-up of any kind); the next
`serve` finishes the first turn and then runs the queued one, in order, each once."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import httpx

from core.store.models import ChannelSetting, ChatMessage, MessageStatus, Platform, Role
from tests.bots.slack.harness import SECRET
from tests.conftest import TEST_CONFIG_YAML
from tests.fakes.llm_server import RequestBody, ScriptedLLM, request_text, text_reply
from tests.fakes.slack import FakeSlack
from tests.fakes.slack_payloads import CHANNEL_ID, TEAM_ID, event_request, make_slack_event
from tests.support.processes import free_port
from tests.support.replicas import (
    about,
    has_status,
    models_file,
    replica,
    resolved,
    slack_mention,
    until,
)


async def _thread_message(http: httpx.AsyncClient, url: str, thread: str, text: str) -> None:
    payload = make_slack_event("thread_message", text=text, thread_ts=thread, user="U0ALICE")
    request = event_request(payload, SECRET)
    response = await http.post(f"{url}/slack/events", content=request.body, headers=request.headers)
    assert response.status_code == 200, response.text


def _first_turn(body: RequestBody) -> bool:
    text = request_text(body)
    return "long job" in text and "then this" not in text


async def _answer(text: str) -> ChatMessage | None:
    """The answer to the user message `text`, once it exists."""
    user = await ChatMessage.get_or_none(role=Role.USER, content=text)
    if user is None:
        return None
    return await ChatMessage.get_or_none(role=Role.ASSISTANT, parent_id=user.id)


async def test_a_queued_message_survives_a_kill_9_of_serve_and_runs_after_the_first(
    db: str, llm: ScriptedLLM, tmp_path: Path
) -> None:
    gate = asyncio.Event()
    llm.script(text_reply("The long answer.", gate=gate, chunk_size=5, match=_first_turn),
               text_reply("The long answer.", chunk_size=5, match=_first_turn),  # resumed
               text_reply("The queued answer.", match=about("then this")))
    (tmp_path / "skills").mkdir()
    (tmp_path / "hermes").mkdir()
    (tmp_path / "hermes" / "config.yaml").write_text(TEST_CONFIG_YAML, encoding="utf-8")
    await ChannelSetting.create(platform=Platform.SLACK, workspace=TEAM_ID, channel=CHANNEL_ID,
                                settings={"busy_mode": "queue"})
    async with FakeSlack(bot_token="xoxb-test") as slack, httpx.AsyncClient(timeout=60.0) as http:
        settings = {
            "DATABASE_URL": db, "BRIDGE_PORT": str(free_port()),
            "MODELS_FILE": str(models_file(tmp_path, llm)), "SKILLS_DIR": str(tmp_path / "skills"),
            "SLACK_BOT_TOKEN": "xoxb-test", "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": slack.api_url, "RUN_LEASE_SECONDS": "2",
        }
        try:
            async with replica("first", tmp_path, settings) as first:
                thread = await slack_mention(http, first, "long job")
                running = await until(lambda: _answer("long job"), "the first turn", first)
                await until(lambda: resolved(llm.requests), "its model call held", first)
                await _thread_message(http, first.url, thread, "then this")
                queued = await until(lambda: _answer("then this"), "the queued turn", first)
                assert (queued.status, queued.queued_behind) == (MessageStatus.QUEUED,
                                                                 running.run_id)
                first.process.send_signal(signal.SIGKILL)
                await first.process.wait()
            async with replica("second", tmp_path, settings) as second:
                gate.set()
                await until(lambda: has_status(running.id, MessageStatus.SUCCESS),
                            "the first turn done", second)
                await until(lambda: has_status(queued.id, MessageStatus.SUCCESS),
                            "the queued turn done after it", second)
        finally:
            gate.set()
    assert (await ChatMessage.get(id=queued.id)).content == "The queued answer."
    asked = [request_text(r) for r in llm.requests]
    queued_call = next(i for i, r in enumerate(asked) if "then this" in r)
    assert all("then this" not in r for r in asked[:queued_call]) and queued_call >= 1
    assert "The long answer." in asked[queued_call], "the queued turn saw the first answer"
    assert sum("then this" in r for r in asked) == 1, "the queued turn ran once"
