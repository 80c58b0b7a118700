"""The Socket Mode websocket: `hello` on connect, envelopes pushed by the test, acks recorded.

slack_sdk's aiohttp client connects to the URL apps.connections.open returned, as is;
it pings with `sdk-ping-pong:<time>` and expects the pong (aiohttp's autoping answers).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

from aiohttp import WSMsgType, web

from tests.fakes.changes import CHANGES, WAIT

from .state import SlackState


class SocketModeServer:
    def __init__(self, state: SlackState) -> None:
        self._state = state
        self.connections: list[web.WebSocketResponse] = []  # every one accepted, in order
        self._transports: dict[int, Any] = {}  # id(ws) -> its TCP connection, to drop it
        self.pushed: list[dict[str, Any]] = []
        self.acks: dict[str, dict[str, Any]] = {}  # envelope_id -> what the client sent back
        self.received: list[dict[str, Any]] = []  # every text frame from the client

    @property
    def current(self) -> web.WebSocketResponse | None:
        live = [ws for ws in self.connections if not ws.closed]
        return live[-1] if live else None

    async def wait_connected(self, count: int = 1, timeout: float = WAIT) -> None:
        """Until `count` connections have been accepted and one is open."""
        await self._wait(lambda: len(self.connections) >= count and self.current is not None,
                         timeout)

    async def push(self, kind: str, payload: dict[str, Any], *,
                   accepts_response_payload: bool = False, timeout: float = WAIT) -> str:
        """Send an envelope (events_api / interactive / slash_commands); its envelope_id."""
        await self.wait_connected(timeout=timeout)
        envelope = {"envelope_id": str(uuid.uuid4()), "type": kind, "payload": payload,
                    "accepts_response_payload": accepts_response_payload}
        if kind == "events_api":
            envelope.update(retry_attempt=0, retry_reason="")
        self.pushed.append(envelope)
        assert self.current is not None
        await self.current.send_json(envelope)
        return envelope["envelope_id"]

    async def push_event(self, payload: dict[str, Any]) -> str:
        return await self.push("events_api", payload)

    async def push_interaction(self, payload: dict[str, Any]) -> str:
        accepts = payload.get("type") == "view_submission"
        return await self.push("interactive", payload, accepts_response_payload=accepts)

    async def push_command(self, payload: dict[str, Any]) -> str:
        return await self.push("slash_commands", payload, accepts_response_payload=True)

    async def wait_ack(self, envelope_id: str, timeout: float = WAIT) -> dict[str, Any]:
        await self._wait(lambda: envelope_id in self.acks, timeout)
        return self.acks[envelope_id]

    async def disconnect(self, reason: str = "refresh_requested") -> None:
        """Ask the client to reconnect, as Slack does every few hours."""
        if self.current is not None:
            await self.current.send_json({"type": "disconnect", "reason": reason})

    async def close(self, code: int = 1000) -> None:
        """Close the live WebSocket with a close frame (`code`), as Slack does when it
        recycles a connection; slack_sdk reconnects at once."""
        if self.current is not None:
            await self.current.close(code=code)

    def drop(self) -> None:
        """Drop the live connection's TCP socket, no close frame (a network failure, seen as
        close code 1006); slack_sdk notices at its next check (`ping_interval`)."""
        if self.current is not None:
            self._transports[id(self.current)].abort()

    async def send_raw(self, text: str) -> None:
        """Send one text frame as is (for frames that are not JSON)."""
        await self.wait_connected()
        assert self.current is not None
        await self.current.send_str(text)

    async def close_all(self) -> None:
        for ws in self.connections:
            await ws.close()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        ticket = request.query.get("ticket", "")
        if ticket not in self._state.tickets:
            return web.Response(status=401, text="invalid ticket")
        self._state.tickets.discard(ticket)
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self.connections.append(ws)
        self._transports[id(ws)] = request.transport
        await ws.send_json(self._hello())
        CHANGES.notify()
        async for frame in ws:
            if frame.type == WSMsgType.TEXT:
                self._receive(_decode(frame.data))
        CHANGES.notify()
        return ws

    def _hello(self) -> dict[str, Any]:
        live = [c for c in self.connections if not c.closed]
        return {"type": "hello", "num_connections": len(live),
                "debug_info": {"host": "fake-slack", "approximate_connection_time": 18060},
                "connection_info": {"app_id": self._state.identity.app_id}}

    def _receive(self, message: dict[str, Any]) -> None:
        self.received.append(message)
        if "envelope_id" in message:
            self.acks[message["envelope_id"]] = message
        CHANGES.notify()

    async def _wait(self, done: Callable[[], bool], timeout: float) -> None:
        await CHANGES.until(done, timeout)


def _decode(text: str) -> dict[str, Any]:
    try:
        message = json.loads(text)
    except ValueError:
        return {"unparsable": text}
    return message if isinstance(message, dict) else {"unparsable": text}
