"""Two `serve` replicas and two Bridges (HERMES_BRIDGE_URL=a,b) on one PostgreSQL, the fake
Slack: one Slack event delivered to both replicas is handled once, and a kill -9 of the Bridge
holding a turn mid-step loses no conversation: that turn goes on on the other Bridge, every log
row is stored once, every thread shows one answer and no false "still working"."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from core.store.models import ChatMessage, MessageStatus, Role
from tests.bots.slack.harness import SECRET, texts
from tests.conftest import BACKEND
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.fakes.slack import FakeSlack
from tests.fakes.slack_payloads import CHANNEL_ID, event_request, make_slack_event
from tests.support.replicas import (
    BRIDGE_TOKEN,
    about,
    assistant_turn,
    finished_in_slack,
    has_status,
    log_seqs,
    models_file,
    replica,
    started_bridge,
    until,
)

pytestmark = pytest.mark.skipif(
    BACKEND != "postgres",
    reason="several replicas share PostgreSQL; on SQLite a second replica is refused by design",
)
STORIES = {
    "story one": ("Once upon a time a lighthouse keeper counted ships. " * 5).strip(),
    "story two": ("Far away a baker taught a river to sing at dawn. " * 5).strip(),
    "story three": ("In a quiet town the clocks agreed to rest on Sundays. " * 5).strip(),
}


async def _post(http: httpx.AsyncClient, url: str, payload: dict[str, object]) -> None:
    request = event_request(payload, SECRET)
    response = await http.post(f"{url}/slack/events", content=request.body, headers=request.headers)
    assert response.status_code == 200, response.text


async def _placed(texts_: list[str]) -> list[ChatMessage] | None:
    """The turns once each has a Bridge and has streamed (its first row stored)."""
    turns = [await assistant_turn(t) for t in texts_]
    if any(t is None or t.bridge is None for t in turns):
        return None
    return turns  # type: ignore[return-value]


async def test_two_replicas_two_bridges_one_bridge_killed_mid_turn(
    db: str, llm: ScriptedLLM, tmp_path: Path
) -> None:
    gates = {text: asyncio.Event() for text in STORIES}
    for text, story in STORIES.items():  # the first call waits mid-stream; a continuation's not
        llm.script(text_reply(story, gate=gates[text], chunk_size=20, match=about(text)),
                   text_reply(story, chunk_size=20, match=about(text)))
    (tmp_path / "skills").mkdir()
    bridges = [await started_bridge(tmp_path, name) for name in ("a", "b")]
    try:
        async with FakeSlack(bot_token="xoxb-test") as slack:
            settings = {
                "DATABASE_URL": db, "HERMES_BRIDGE_URL": ",".join(b.url for b in bridges),
                "BRIDGE_TOKEN": BRIDGE_TOKEN, "MODELS_FILE": str(models_file(tmp_path, llm)),
                "SKILLS_DIR": str(tmp_path / "skills"), "SLACK_BOT_TOKEN": "xoxb-test",
                "SLACK_SIGNING_SECRET": SECRET, "SLACK_API_URL": slack.api_url,
                "RUN_LEASE_SECONDS": "2",
            }
            async with replica("A", tmp_path, settings) as a, \
                    replica("B", tmp_path, settings) as b, \
                    httpx.AsyncClient(timeout=60.0) as http:
                payloads = [make_slack_event("app_mention", text=t) for t in STORIES]
                await _post(http, a.url, payloads[0])
                await _post(http, b.url, payloads[1])
                await asyncio.gather(_post(http, a.url, payloads[2]),  # the same event, twice
                                     _post(http, b.url, payloads[2]))
                turns = await until(lambda: _placed(list(STORIES)), "three turns placed", a, b)
                await until(lambda: _streamed(llm, len(STORIES)), "every story streaming", a, b)
                doomed = next(x for x in bridges if x.url == turns[0].bridge)

                await doomed.kill()  # kill -9 of the Bridge holding the first conversation

                for gate in gates.values():
                    gate.set()
                for turn in turns:
                    await until(lambda: has_status(turn.id, MessageStatus.SUCCESS), "every turn done", a, b)
                threads = [p["event"]["ts"] for p in payloads]  # type: ignore[index]
                for thread in threads:
                    await until(lambda: _shown(slack, thread), "every answer shown", a, b)
    finally:
        for child in bridges:
            await child.kill()

    assert await ChatMessage.filter(role=Role.USER).count() == len(STORIES), "an event twice"
    moved = await ChatMessage.get(id=turns[0].id)
    assert moved.bridge != doomed.url, "the turn stayed on the Bridge that was killed"
    for turn, story in zip(turns, STORIES.values(), strict=True):
        assert (await ChatMessage.get(id=turn.id)).content == story
        seqs = await log_seqs(turn.id)
        assert seqs == list(range(1, len(seqs) + 1)), seqs  # every row once, no gap
    for thread in threads:
        bot = [m for m in slack.thread(CHANNEL_ID, thread) if m.bot_id]
        assert len(bot) == 1, [texts(m) for m in bot]  # one answer, no busy reply, no double
        assert "still working" not in texts(bot[0])


async def _streamed(llm: ScriptedLLM, count: int) -> bool:
    return len(llm.requests) >= count


async def _shown(slack: FakeSlack, thread: str) -> bool:
    return bool(finished_in_slack(slack, thread))
