"""Every REST call passes here: read and record it, check auth, faults and rate limits."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from .core import BODY_KEY, FILES_KEY, FakeCore, Missing, core_of
from .ratelimit import MESSAGE_WRITE, WEBHOOK_WRITE
from .records import UploadedFile
from .responses import error

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
API_PREFIX = "/api/v10"
# Routes Discord serves without the bot token: interaction callbacks/webhooks and the CDN.
UNAUTHENTICATED = (API_PREFIX + "/interactions/", API_PREFIX + "/webhooks/", "/attachments/")
_WEBHOOK = "/webhooks/{webhook_id}/{webhook_token}"
# Route key -> (rate limit bucket, the path parameter that makes it per-channel/per-token).
BUCKETS = {
    "POST /channels/{channel_id}/messages": (MESSAGE_WRITE, "channel_id"),
    "PATCH /channels/{channel_id}/messages/{message_id}": (MESSAGE_WRITE, "channel_id"),
    f"POST {_WEBHOOK}": (WEBHOOK_WRITE, "webhook_token"),
    f"PATCH {_WEBHOOK}/messages/@original": (WEBHOOK_WRITE, "webhook_token"),
    f"PATCH {_WEBHOOK}/messages/{{message_id}}": (WEBHOOK_WRITE, "webhook_token"),
}


def route_key(request: web.Request) -> str:
    """`"METHOD /path/{template}"`, the way discord.py names a `Route.key`."""
    resource = request.match_info.route.resource
    template = resource.canonical if resource is not None else request.path
    return f"{request.method} {template.removeprefix(API_PREFIX)}"


async def read_body(request: web.Request) -> tuple[Any, list[UploadedFile]]:
    """The JSON body, or a multipart request's `payload_json` plus its file parts."""
    if request.content_type.startswith("multipart/"):
        body, files = None, []
        async for part in await request.multipart():
            if part.name == "payload_json":
                body = json.loads(await part.text())
            else:
                content_type = part.headers.get("Content-Type", "application/octet-stream")
                data = bytes(await part.read())
                files.append(UploadedFile(part.name or "", part.filename or "", content_type, data))
        return body, files
    raw = await request.read() if request.can_read_body else b""
    if not raw:
        return None, []
    try:
        return json.loads(raw), []
    except ValueError:
        return raw.decode(errors="replace"), []


def _decoded(response: web.StreamResponse) -> Any:
    if not isinstance(response, web.Response) or not isinstance(response.body, bytes):
        return None
    if not response.body or response.content_type != "application/json":
        return None
    return json.loads(response.body)


async def _answer(
    core: FakeCore, request: web.Request, handler: Handler, key: str
) -> web.StreamResponse:
    authorized = request.headers.get("Authorization") == f"Bot {core.token}"
    if not authorized and not request.path.startswith(UNAUTHENTICATED):
        return error(401, 0, "401: Unauthorized")
    injected = await core.faults.apply(key)
    if injected is not None:
        return injected
    bucket = BUCKETS.get(key)
    verdict = core.limiter.hit(bucket[0], request.match_info[bucket[1]]) if bucket else None
    if verdict is not None and not verdict.allowed:
        return verdict.too_many_requests()
    response = await handler(request)
    if verdict is not None:
        response.headers.update(verdict.headers)
    return response


@web.middleware
async def discord_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    core = core_of(request)
    if request.path == "/gateway":
        return await handler(request)
    key = route_key(request)
    body, files = await read_body(request)
    request[BODY_KEY], request[FILES_KEY] = body, files
    call = core.record(request, key, body, files)
    try:
        response = await _answer(core, request, handler, key)
    except Missing as missing:
        response = missing.response
    except web.HTTPException as http_error:
        response = error(http_error.status, 0, f"{http_error.status}: {http_error.reason}")
    except Exception as bug:  # a bug in the fake: fail the client at once, and the test on exit
        core.internal_errors.append(bug)
        response = error(400, 0, f"fake Discord bug: {bug!r}")
    call.status = response.status
    call.response = _decoded(response)
    core.notifier.notify()
    return response
