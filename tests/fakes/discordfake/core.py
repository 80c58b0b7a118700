"""The state one fake Discord shares between its REST handlers, gateway and test helpers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from .clock import Clock
from .faults import FaultBoard
from .gateway import Gateway
from .limits import Limits
from .notify import Notifier
from .ratelimit import RateLimiter
from .records import Call, InteractionRecord, UploadedFile
from .responses import UNKNOWN_CHANNEL, UNKNOWN_MESSAGE, not_found
from .world import World

Payload = dict[str, Any]


class Missing(Exception):
    """Raised by lookups inside handlers; the middleware answers with `response`."""

    def __init__(self, response: web.Response) -> None:
        super().__init__(response.status)
        self.response = response


@dataclass
class FakeCore:
    token: str
    limits: Limits
    clock: Clock
    world: World
    notifier: Notifier
    faults: FaultBoard
    limiter: RateLimiter
    gateway: Gateway
    base_url: str = ""
    calls: list[Call] = field(default_factory=list)
    interactions: dict[str, InteractionRecord] = field(default_factory=dict)
    internal_errors: list[Exception] = field(default_factory=list)

    def record(
        self, request: web.Request, route: str, body: Any, files: list[UploadedFile]
    ) -> Call:
        path = request.path.removeprefix("/api/v10")
        call = Call(
            seq=len(self.calls),
            at=self.clock(),
            method=request.method,
            path=path,
            route=route,
            params=dict(request.match_info),
            query=dict(request.query),
            json=body,
            files=files,
        )
        self.calls.append(call)
        self.notifier.notify()
        return call

    def channel(self, channel_id: str) -> Payload:
        channel = self.world.channels.get(channel_id)
        if channel is None:
            raise Missing(not_found(UNKNOWN_CHANNEL, "Channel"))
        return channel

    def message(self, channel_id: str, message_id: str) -> Payload:
        message = self.world.messages.get(message_id)
        if message is None or message["channel_id"] != channel_id:
            raise Missing(not_found(UNKNOWN_MESSAGE, "Message"))
        return message

    def attachment_url(self, channel_id: str, attachment_id: str, filename: str) -> str:
        return f"{self.base_url}/attachments/{channel_id}/{attachment_id}/{filename}"

    def interaction_by_token(self, token: str) -> InteractionRecord | None:
        return next((r for r in self.interactions.values() if r.token == token), None)

    def register_interaction(self, payload: Payload) -> InteractionRecord:
        record = self.interactions[payload["id"]] = InteractionRecord(payload, self.clock())
        return record

    async def dispatch_message(self, event: str, message: Payload) -> None:
        """MESSAGE_CREATE/UPDATE for a stored message, unless only its author can see it."""
        if not int(message.get("flags") or 0) & 64:
            await self.gateway.dispatch(event, self.world.for_gateway(message))

    async def dispatch_delete(self, message: Payload) -> None:
        event = {"id": message["id"], "channel_id": message["channel_id"]}
        guild_id = self.world.channels[message["channel_id"]].get("guild_id")
        if guild_id:
            event["guild_id"] = guild_id
        if not int(message.get("flags") or 0) & 64:
            await self.gateway.dispatch("MESSAGE_DELETE", event)


CORE_KEY = web.AppKey("discord_fake_core", FakeCore)
BODY_KEY = web.RequestKey("discord_fake_body", object)
FILES_KEY = web.RequestKey("discord_fake_files", list)


def core_of(request: web.Request) -> FakeCore:
    return request.app[CORE_KEY]


def body_of(request: web.Request) -> Payload:
    """The request's JSON body (or multipart payload_json), read by the middleware."""
    body = request.get(BODY_KEY)
    return body if isinstance(body, dict) else {}


def files_of(request: web.Request) -> list[UploadedFile]:
    return request.get(FILES_KEY, [])
