"""Runs a real Bridge (uvicorn, in this process, random 127.0.0.1 port) and reads its SSE."""

from __future__ import annotations

import asyncio
import json
import socket
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import uvicorn
from litestar import Litestar

from bridge.app import create_app
from bridge.settings import BridgeSettings
from tests.fakes.llm_server import ScriptedLLM
from tests.serving import KEEP_ALIVE
from tests.fakes.changes import WAIT


@dataclass(frozen=True)
class Event:
    id: int
    name: str
    data: dict[str, Any]


@dataclass
class RunningBridge:
    url: str
    client: httpx.AsyncClient  # sends the Bridge's token, if it has one
    settings: BridgeSettings
    app: Litestar


@asynccontextmanager
async def running_bridge(settings: BridgeSettings, secrets: Mapping[str, str] | None = None,
                         port: int = 0) -> AsyncIterator[RunningBridge]:
    """Serve `create_app(settings, secrets)` until the block exits (on `port`, else a free
    one: a Bridge started again on the same port stands for a restarted one)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    port = sock.getsockname()[1]
    app = create_app(settings, secrets)
    config = uvicorn.Config(app, lifespan="on", log_level="warning", timeout_graceful_shutdown=1,
                            timeout_keep_alive=KEEP_ALIVE)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    await wait_until(lambda: server.started)
    url = f"http://127.0.0.1:{port}"
    auth = {"Authorization": f"Bearer {settings.token}"} if settings.token else {}
    async with httpx.AsyncClient(base_url=url, timeout=WAIT, headers=auth) as client:
        try:
            yield RunningBridge(url, client, settings, app)
        finally:
            server.should_exit = True
            await asyncio.wait_for(task, WAIT)
            sock.close()


async def wait_until(predicate: Callable[[], object], deadline: float = WAIT) -> None:
    """Poll `predicate` until true; fails the test after `deadline` seconds."""
    async with asyncio.timeout(deadline):
        while not predicate():
            await asyncio.sleep(0.01)


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def run_body(llm: ScriptedLLM, message: str = "hello", **extra: Any) -> dict[str, Any]:
    """A RunRequest aimed at the test's scripted LLM."""
    body = {
        "run_id": new_id("run"),
        "session_id": new_id("chat"),
        "user_message": message,
        "model": {"name": llm.model, "base_url": llm.base_url},
    }
    return {**body, **extra}


class SseReader:
    """Reads one SSE response in steps: `until(...)` can be called again to continue."""

    def __init__(self, response: httpx.Response) -> None:
        self._lines = response.aiter_lines()
        self.comments: list[str] = []

    async def until(self, stop: Callable[[Event], bool] | None = None,
                    stop_on_comment: bool = False) -> list[Event]:
        """Events until `stop` accepts one (included), a comment if asked, or the end."""
        events: list[Event] = []
        frame: dict[str, str] = {}
        async with asyncio.timeout(WAIT):
            async for line in self._lines:
                if line.startswith(":"):
                    self.comments.append(line)
                    if stop_on_comment:
                        break
                elif line:
                    key, _, value = line.partition(":")
                    frame[key] = value.removeprefix(" ")
                elif frame:
                    data = json.loads(frame["data"])
                    events.append(Event(int(frame["id"]), frame["event"], data))
                    frame = {}
                    if stop is not None and stop(events[-1]):
                        break
        return events

    async def until_event(self, name: str) -> list[Event]:
        return await self.until(lambda e: e.name == name)


async def read_sse(response: httpx.Response) -> list[Event]:
    """Every event of an SSE response."""
    return await SseReader(response).until()


async def run_to_end(bridge: RunningBridge, body: dict[str, Any]) -> list[Event]:
    """POST /run and read the whole stream."""
    async with bridge.client.stream("POST", "/run", json=body) as response:
        assert response.status_code == 200, await response.aread()
        assert response.headers["content-type"].startswith("text/event-stream")
        return await read_sse(response)


def names(events: list[Event]) -> list[str]:
    return [e.name for e in events]


def text_of(events: list[Event]) -> str:
    return "".join(e.data["text"] for e in events if e.name == "text")
