"""Tool approvals with real processes (issue 19): `hermes-chat serve` and its child Bridge with
`BRIDGE_TOOLSETS=terminal`, the scripted LLM asking to `rm -rf` a directory the test owns, the
admin API deciding. The approval asked before a `serve` restart (SIGTERM) or a kill -9 of the
Bridge is still pending after it, nothing ran meanwhile, and the decision given then is applied
by the Bridge that continues the turn; Allow once is not remembered, so the next request asks
again, and Deny leaves the directory alone."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from core.store.models import ChatMessage, MessageStatus
from tests.conftest import TEST_CONFIG_YAML
from tests.fakes.llm_server import RequestBody, ScriptedLLM, ToolCall, text_reply, tool_reply
from tests.support.durable import bridge_process, restarted
from tests.support.processes import free_port
from tests.support.replicas import Replica, models_file, replica, until

TOKEN = "admin-token-approvals"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@dataclass
class World:
    tmp_path: Path
    settings: dict[str, str]
    http: httpx.AsyncClient
    victim: Path


def _told(body: RequestBody) -> bool:
    """The model was given the tool's result (so it answers) rather than asking for it."""
    messages = body.get("messages", [])
    return bool(messages) and messages[-1].get("role") == "tool"


@asynccontextmanager
async def world(db: str, llm: ScriptedLLM, tmp_path: Path) -> AsyncIterator[World]:
    victim = tmp_path / "victim"
    victim.mkdir()
    rm = ToolCall("terminal", {"command": f"rm -rf {victim}"})
    # Any number of times: a continued turn runs its asking step (one model call) again.
    llm.fallback = None
    llm.responder = lambda body: text_reply("Done.") if _told(body) else tool_reply(rm)
    (tmp_path / "skills").mkdir()
    (tmp_path / "hermes").mkdir()
    (tmp_path / "hermes" / "config.yaml").write_text(TEST_CONFIG_YAML, encoding="utf-8")
    settings = {
        "DATABASE_URL": db, "BRIDGE_PORT": str(free_port()), "ADMIN_TOKEN": TOKEN,
        "MODELS_FILE": str(models_file(tmp_path, llm)), "SKILLS_DIR": str(tmp_path / "skills"),
        "BRIDGE_TOOLSETS": "terminal,clarify", "RUN_LEASE_SECONDS": "2",
    }
    async with httpx.AsyncClient(timeout=60.0, headers=AUTH) as http:
        yield World(tmp_path, settings, http, victim)


async def _start(w: World, serve: Replica, session_id: int | None = None) -> dict[str, Any]:
    if session_id is None:
        session = await w.http.post(f"{serve.url}/api/chat/sessions", json={})
        session_id = session.json()["id"]
    started = await w.http.post(f"{serve.url}/api/chat/sessions/{session_id}/runs",
                                json={"message": "clean up the victim directory"})
    assert started.status_code in (200, 201), started.text
    return started.json()


async def _pending(w: World, serve: Replica) -> list[dict[str, Any]]:
    try:
        answer = await w.http.get(f"{serve.url}/api/chat/approvals")
    except httpx.TransportError:
        return []
    return answer.json()["items"] if answer.status_code == 200 else []


async def _decide(w: World, serve: Replica, approval_id: str, decision: str) -> None:
    answer = await w.http.post(f"{serve.url}/api/chat/approvals/{approval_id}/decision",
                               json={"decision": decision})
    assert answer.status_code == 200, answer.text


async def _ended(message_id: int) -> bool:
    return (await ChatMessage.get(id=message_id)).status == MessageStatus.SUCCESS


async def _asked(w: World, serve: Replica) -> dict[str, Any]:
    pending = await until(lambda: _pending(w, serve), "the approval asked", serve)
    assert isinstance(pending, list) and len(pending) == 1
    return pending[0]


async def across(w: World, stop: Callable[[World, Replica], Awaitable[Replica | None]]) -> None:
    """Ask on one serve, `stop` something, decide and finish on the serve that is left."""
    async with replica("first", w.tmp_path, w.settings) as first:
        run = await _start(w, first)
        asked = await _asked(w, first)
        assert asked["command"] == f"rm -rf {w.victim}" and asked["runId"] == run["runId"]
        still = await stop(w, first)
        if still is not None:  # serve lived on (its Bridge was killed)
            await finish(w, still, run, asked)
            return
    async with replica("second", w.tmp_path, w.settings) as second:
        await finish(w, second, run, asked)


async def finish(w: World, serve: Replica, run: dict[str, Any], asked: dict[str, Any]) -> None:
    assert w.victim.exists()  # nothing ran without a decision, across the restart
    assert [a["approvalId"] for a in await _pending(w, serve)] == [asked["approvalId"]]
    await _decide(w, serve, asked["approvalId"], "once")
    await until(lambda: _ended(run["messageId"]), "the approved turn done", serve)
    assert not w.victim.exists()  # it ran, once

    w.victim.mkdir()  # once is not remembered: the next request asks again
    again = await _start(w, serve, run["sessionId"])
    second = await _asked(w, serve)
    assert second["approvalId"] != asked["approvalId"]
    await _decide(w, serve, second["approvalId"], "deny")
    await until(lambda: _ended(again["messageId"]), "the denied turn done", serve)
    assert w.victim.exists()


async def test_an_approval_survives_a_serve_restart(
    db: str, llm: ScriptedLLM, tmp_path: Path
) -> None:
    async def sigterm(_: World, first: Replica) -> None:
        first.process.send_signal(signal.SIGTERM)  # the child Bridge goes with it
        assert await asyncio.wait_for(first.process.wait(), 60) == 0, first.output()
        return None

    async with world(db, llm, tmp_path) as w:
        await across(w, sigterm)


async def test_an_approval_survives_a_kill_9_of_the_bridge(
    db: str, llm: ScriptedLLM, tmp_path: Path
) -> None:
    async def kill_bridge(w: World, serve: Replica) -> Replica:
        before = await bridge_process(w, serve)  # type: ignore[arg-type]
        os.kill(int(str(before["pid"])), signal.SIGKILL)
        await until(lambda: restarted(w, serve, before["instance"]),  # type: ignore[arg-type]
                    "the supervisor restarted the Bridge", serve)
        return serve

    async with world(db, llm, tmp_path) as w:
        await across(w, kill_bridge)
