"""REST routes on channels: messages, threads, typing, reactions, attachments."""

from __future__ import annotations

import socket

from aiohttp import web

from tests.fakes import discord_payloads as dp

from .core import FakeCore, Missing, body_of, core_of, files_of
from .messages import compose, edited, rejection
from .responses import (
    CANNOT_EDIT_OTHERS,
    CANNOT_SEND_HERE,
    THREAD_ALREADY_CREATED,
    error,
    form_error,
    json_response,
    no_content,
)
from .validation import too_long
from .world import FORUM, THREAD_TYPES, CdnSend

CHANNEL = "/api/v10/channels/{channel_id}"
MESSAGE = CHANNEL + "/messages/{message_id}"
CDN_CHUNK = 16384


def add_routes(app: web.Application) -> None:
    router = app.router
    router.add_get(CHANNEL, get_channel)
    router.add_patch(CHANNEL, patch_channel)
    router.add_get(CHANNEL + "/messages", list_messages)
    router.add_post(CHANNEL + "/messages", create_message)
    router.add_get(MESSAGE, get_message)
    router.add_patch(MESSAGE, edit_message)
    router.add_delete(MESSAGE, delete_message)
    router.add_post(MESSAGE + "/threads", thread_from_message)
    router.add_post(CHANNEL + "/threads", thread_without_message)
    router.add_post(CHANNEL + "/typing", accepted)
    router.add_put(MESSAGE + "/reactions/{emoji}/@me", add_reaction)
    router.add_delete(MESSAGE + "/reactions/{emoji}/@me", remove_reaction)
    router.add_put(CHANNEL + "/thread-members/{user_id}", accepted)
    router.add_get("/attachments/{channel_id}/{attachment_id}/{filename}", attachment_bytes)


def _ids(request: web.Request) -> tuple[FakeCore, str]:
    return core_of(request), request.match_info["channel_id"]


async def accepted(request: web.Request) -> web.Response:
    core, channel_id = _ids(request)
    core.channel(channel_id)
    return no_content()


async def get_channel(request: web.Request) -> web.Response:
    core, channel_id = _ids(request)
    if channel_id in core.world.hidden:  # the bot lacks View Channel there
        return error(403, 50001, "Missing Access")
    return json_response(core.channel(channel_id))


async def patch_channel(request: web.Request) -> web.Response:
    """Rename a channel, or archive/lock a thread; dispatches THREAD_UPDATE/CHANNEL_UPDATE."""
    core, channel_id = _ids(request)
    channel = core.channel(channel_id)
    body = body_of(request)
    if "name" in body:
        if channel["type"] in THREAD_TYPES:
            refused = _check_thread_name(core, body.get("name") or "")
            if refused is not None:
                return refused
        channel["name"] = body["name"]
    if channel["type"] in THREAD_TYPES:
        meta = channel["thread_metadata"]
        for key in ("archived", "locked", "auto_archive_duration"):
            if key in body:
                meta[key] = body[key]
        await core.gateway.dispatch("THREAD_UPDATE", channel)
    else:
        await core.gateway.dispatch("CHANNEL_UPDATE", channel)
    return json_response(channel)


async def list_messages(request: web.Request) -> web.Response:
    """Newest first, honouring `limit` (max 100), `before` and `after`."""
    core, channel_id = _ids(request)
    core.channel(channel_id)
    messages = core.world.channel_messages_of(channel_id)
    if "before" in request.query:
        messages = [m for m in messages if int(m["id"]) < int(request.query["before"])]
    if "after" in request.query:
        messages = [m for m in messages if int(m["id"]) > int(request.query["after"])]
    limit = min(int(request.query.get("limit", 50)), 100)
    newest_first = list(reversed(messages))
    if "after" in request.query:
        return json_response(newest_first[-limit:])
    return json_response(newest_first[:limit])


async def get_message(request: web.Request) -> web.Response:
    core, channel_id = _ids(request)
    return json_response(core.message(channel_id, request.match_info["message_id"]))


async def create_message(request: web.Request) -> web.Response:
    core, channel_id = _ids(request)
    channel = core.channel(channel_id)
    if channel["type"] == FORUM:  # a forum has posts, not messages
        return error(400, CANNOT_SEND_HERE, "Cannot send messages in a non-text channel")
    files = files_of(request)
    body = body_of(request)
    nonce = str(body["nonce"]) if body.get("enforce_nonce") and body.get("nonce") else None
    if nonce is not None and (earlier := core.world.nonced(channel_id, nonce, core.clock())):
        return json_response(earlier)  # created already: that message, and no new one
    message = compose(core, channel, body, files)
    refused = rejection(core, message, files)
    if refused is not None:
        return refused
    core.world.store_message(message)
    if nonce is not None:
        core.world.remember_nonce(channel_id, nonce, message["id"], core.clock())
    await core.dispatch_message("MESSAGE_CREATE", message)
    return json_response(message)


async def edit_message(request: web.Request) -> web.Response:
    core, channel_id = _ids(request)
    message = core.message(channel_id, request.match_info["message_id"])
    if message["author"]["id"] != core.world.bot["id"]:
        return error(403, CANNOT_EDIT_OTHERS, "Cannot edit a message authored by another user")
    files = files_of(request)
    updated = edited(core, message, body_of(request), files)
    refused = rejection(core, updated, files)
    if refused is not None:
        return refused
    message.clear()
    message.update(updated)
    await core.dispatch_message("MESSAGE_UPDATE", message)
    return json_response(message)


async def delete_message(request: web.Request) -> web.Response:
    core, channel_id = _ids(request)
    message = core.message(channel_id, request.match_info["message_id"])
    core.world.remove_message(message)
    await core.dispatch_delete(message)
    return no_content()


def _check_thread_name(core: FakeCore, name: str) -> web.Response | None:
    if not name:
        return form_error({"name": ("BASE_TYPE_REQUIRED", "This field is required")})
    if len(name) > core.limits.thread_name:
        return form_error({"name": too_long(core.limits.thread_name)})
    return None


async def _open_thread(core: FakeCore, thread: dict) -> web.Response:
    core.world.add_channel(thread)
    await core.gateway.dispatch("THREAD_CREATE", dict(thread, newly_created=True))
    return json_response(thread, status=201)


async def thread_from_message(request: web.Request) -> web.Response:
    """A public thread whose id is the message's id, as on Discord."""
    core, channel_id = _ids(request)
    channel = core.channel(channel_id)
    message = core.message(channel_id, request.match_info["message_id"])
    body = body_of(request)
    refused = _check_thread_name(core, body.get("name") or "")
    if refused is not None:
        return refused
    if message["id"] in core.world.channels:
        message_text = "A thread has already been created for this message"
        return error(400, THREAD_ALREADY_CREATED, message_text)
    if channel["type"] not in (0, 5):
        return error(400, 50024, "Cannot execute action on this channel type")
    thread = dp.make_thread(
        message["id"], channel["guild_id"], channel_id, core.world.bot["id"], body["name"],
        auto_archive_duration=body.get("auto_archive_duration") or 1440,
    )
    message["thread"] = thread
    message["flags"] = int(message.get("flags") or 0) | 32
    return await _open_thread(core, thread)


async def thread_without_message(request: web.Request) -> web.Response:
    core, channel_id = _ids(request)
    channel = core.channel(channel_id)
    body = body_of(request)
    refused = _check_thread_name(core, body.get("name") or "")
    if refused is not None:
        return refused
    if channel["type"] == FORUM:
        return await _forum_post(core, channel, body, files_of(request))
    thread = dp.make_thread(
        core.world.ids.next(), channel["guild_id"], channel_id, core.world.bot["id"], body["name"],
        auto_archive_duration=body.get("auto_archive_duration") or 1440,
        private=body.get("type") == 12,
    )
    return await _open_thread(core, thread)


async def _forum_post(
    core: FakeCore, forum: dict, body: dict, files: list
) -> web.Response:
    """A post of a forum: its starter message (`body["message"]`) has the post's id and is
    in the post; THREAD_CREATE, then MESSAGE_CREATE of the starter, as Discord sends them."""
    starter_body = body.get("message")
    if not isinstance(starter_body, dict):
        return form_error({"message": ("BASE_TYPE_REQUIRED", "This field is required")})
    starter = compose(core, forum, starter_body, files)
    refused = rejection(core, starter, files)
    if refused is not None:
        return refused
    post = core.world.add_post(forum["id"], body["name"], core.world.bot, starter)
    post["thread_metadata"]["auto_archive_duration"] = body.get("auto_archive_duration") or 1440
    message = core.world.messages[post["id"]]
    await core.gateway.dispatch("THREAD_CREATE", dict(post, newly_created=True))
    await core.dispatch_message("MESSAGE_CREATE", message)
    return json_response(dict(post, message=message), status=201)


async def add_reaction(request: web.Request) -> web.Response:
    core, channel_id = _ids(request)
    message = core.message(channel_id, request.match_info["message_id"])
    emoji = request.match_info["emoji"]
    reactions = message.setdefault("reactions", [])
    if not any(r["emoji"]["name"] == emoji for r in reactions):
        reactions.append({"emoji": {"id": None, "name": emoji}, "count": 1, "me": True})
    return no_content()


async def attachment_bytes(request: web.Request) -> web.StreamResponse:
    """The CDN: streams the bytes of attachments the fake stored, noting how much of each went
    out (`World.cdn_sends`), or redirects a file named in `World.cdn_redirects`."""
    world = core_of(request).world
    location = world.cdn_redirects.get(request.match_info["filename"])
    if location is not None:
        return web.Response(status=302, headers={"Location": location})
    attachment_id = request.match_info["attachment_id"]
    data = world.attachments.get(attachment_id)
    if data is None:
        raise Missing(web.Response(status=404))
    send = world.cdn_sends[attachment_id] = CdnSend()
    try:
        return await _stream(request, data, send)
    finally:
        send.over = True
        core_of(request).notifier.notify()


async def _stream(request: web.Request, data: bytes, send: CdnSend) -> web.StreamResponse:
    """Small socket buffers, so what is sent is close to what the client took."""
    sock = request.transport.get_extra_info("socket") if request.transport else None
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, CDN_CHUNK)
    response = web.StreamResponse(headers={"Content-Type": "application/octet-stream"})
    response.content_length = len(data)
    await response.prepare(request)
    try:
        for start in range(0, len(data), CDN_CHUNK):
            await response.write(data[start:start + CDN_CHUNK])
            send.sent = min(len(data), start + CDN_CHUNK)
        await response.write_eof()
    except ConnectionError:  # the client took what it wanted and closed
        return response
    send.whole = True
    return response


async def remove_reaction(request: web.Request) -> web.Response:
    """The bot's own reaction goes (204 whether or not it was there, as on Discord)."""
    core, channel_id = _ids(request)
    message = core.message(channel_id, request.match_info["message_id"])
    emoji = request.match_info["emoji"]
    message["reactions"] = [r for r in message.get("reactions", []) if r["emoji"]["name"] != emoji]
    return no_content()
