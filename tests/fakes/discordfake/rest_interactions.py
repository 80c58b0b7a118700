"""Interaction callbacks (`/interactions/{id}/{token}/callback`) and the interaction webhook.

Callbacks must come within `Limits.interaction_ack_deadline` seconds of the dispatch (on
the fake's clock) and only once; follow-ups and `@original` edits work for
`Limits.interaction_token_ttl` seconds after that.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from tests.fakes import discord_payloads as dp

from .core import FakeCore, Missing, body_of, core_of, files_of
from .messages import LOADING, compose, edited, rejection
from .records import InteractionRecord, UploadedFile
from .responses import (
    ALREADY_ACKNOWLEDGED,
    UNKNOWN_INTERACTION,
    UNKNOWN_MESSAGE,
    UNKNOWN_WEBHOOK,
    error,
    form_error,
    json_response,
    no_content,
    not_found,
)
from .validation import check_choices, check_modal

Payload = dict[str, Any]
WEBHOOK = "/api/v10/webhooks/{webhook_id}/{webhook_token}"
# Callback types each interaction type accepts.
ALLOWED = {2: {4, 5, 9}, 3: {4, 5, 6, 7, 9}, 4: {8}, 5: {4, 5, 6, 7}}


def add_routes(app: web.Application) -> None:
    router = app.router
    router.add_post("/api/v10/interactions/{webhook_id}/{webhook_token}/callback", callback)
    router.add_post(WEBHOOK, followup)
    for suffix in ("/messages/@original", "/messages/{message_id}"):
        router.add_get(WEBHOOK + suffix, get_webhook_message)
        router.add_patch(WEBHOOK + suffix, edit_webhook_message)
        router.add_delete(WEBHOOK + suffix, delete_webhook_message)


def _interaction_message_extra(core: FakeCore, record: InteractionRecord) -> Payload:
    payload = record.payload
    user = payload["member"]["user"] if "member" in payload else payload["user"]
    metadata = {
        "id": record.id,
        "type": payload["type"],
        "user": user,
        "authorizing_integration_owners": payload.get("authorizing_integration_owners", {}),
    }
    app_id = core.world.application_id
    return {"webhook_id": app_id, "application_id": app_id, "interaction_metadata": metadata}


async def callback(request: web.Request) -> web.Response:
    core = core_of(request)
    record = core.interactions.get(request.match_info["webhook_id"])
    if record is None or record.token != request.match_info["webhook_token"]:
        return not_found(UNKNOWN_INTERACTION, "interaction")
    if core.clock() - record.created_at > core.limits.interaction_ack_deadline:
        return not_found(UNKNOWN_INTERACTION, "interaction")
    if record.callbacks:
        return error(400, ALREADY_ACKNOWLEDGED, "Interaction has already been acknowledged.")
    body = body_of(request)
    kind, data = body.get("type"), body.get("data") or {}
    if kind not in ALLOWED.get(record.payload["type"], set()):
        return _bad_type("Interaction response type is invalid")
    errors = {}
    if kind == 9:
        errors = check_modal(data, core.limits)
    elif kind == 8:
        errors = check_choices(data, core.limits)
    if errors:
        return form_error(errors)
    message = await _respond(core, record, kind, data, request)
    if isinstance(message, web.Response):
        return message
    record.callbacks.append(body)
    core.notifier.notify()
    return json_response(_callback_answer(record, kind, message))


async def _respond(
    core: FakeCore, record: InteractionRecord, kind: int, data: Payload, request: web.Request
) -> Payload | web.Response | None:
    """Apply a callback to the world; the message it created/edited, or a 400."""
    channel = core.channel(record.payload["channel_id"])
    files = files_of(request)
    if kind in (4, 5):
        body = data
        if kind == 5:
            body = {"flags": LOADING | (int(data.get("flags") or 0) & dp.EPHEMERAL)}
        message = compose(core, channel, body, files, **_interaction_message_extra(core, record))
        if kind == 5:
            message["flags"] = int(body["flags"])
        message["type"] = 20 if record.payload["type"] == 2 else 0
        refused = rejection(core, message, files)
        if refused is not None:
            return refused
        core.world.store_message(message)
        record.original_message_id = message["id"]
        await core.dispatch_message("MESSAGE_CREATE", message)
        return message
    source = record.payload.get("message")
    if kind in (6, 7) and source is None:
        return _bad_type("There is no message to update")
    if kind in (6, 7):
        record.original_message_id = source["id"]
    if kind == 7:
        return await _edit(core, core.message(source["channel_id"], source["id"]), data, files)
    return None


def _bad_type(message: str) -> web.Response:
    return form_error({"type": ("INTERACTION_RESPONSE_TYPE_INVALID", message)})


async def _edit(
    core: FakeCore, message: Payload, body: Payload, files: list[UploadedFile]
) -> Payload | web.Response:
    updated = edited(core, message, body, files)
    refused = rejection(core, updated, files)
    if refused is not None:
        return refused
    message.clear()
    message.update(updated)
    await core.dispatch_message("MESSAGE_UPDATE", message)
    return message


def _callback_answer(record: InteractionRecord, kind: int, message: Payload | None) -> Payload:
    """The `?with_response=1` body: the interaction callback object."""
    flags = int(message.get("flags") or 0) if message else 0
    interaction = {
        "id": record.id,
        "type": record.payload["type"],
        "response_message_loading": kind == 5,
        "response_message_ephemeral": bool(flags & dp.EPHEMERAL),
    }
    answer: Payload = {"interaction": interaction}
    if message is not None:
        interaction["response_message_id"] = message["id"]
        answer["resource"] = {"type": kind, "message": message}
    return answer


def _webhook_record(request: web.Request) -> tuple[FakeCore, InteractionRecord]:
    core = core_of(request)
    record = core.interaction_by_token(request.match_info["webhook_token"])
    ttl = core.limits.interaction_token_ttl
    expired = record is not None and core.clock() - record.created_at > ttl
    if (record is None or not record.callbacks or expired
            or request.match_info["webhook_id"] != core.world.application_id):
        raise Missing(not_found(UNKNOWN_WEBHOOK, "Webhook"))
    return core, record


def _webhook_message(request: web.Request) -> tuple[FakeCore, InteractionRecord, Payload]:
    core, record = _webhook_record(request)
    wanted = request.match_info.get("message_id") or record.original_message_id
    owned = {record.original_message_id, *record.followup_ids}
    message = core.world.messages.get(wanted or "")
    if message is None or wanted not in owned:
        raise Missing(not_found(UNKNOWN_MESSAGE, "Message"))
    return core, record, message


async def followup(request: web.Request) -> web.Response:
    core, record = _webhook_record(request)
    channel = core.channel(record.payload["channel_id"])
    files = files_of(request)
    extra = _interaction_message_extra(core, record)
    message = compose(core, channel, body_of(request), files, **extra)
    refused = rejection(core, message, files)
    if refused is not None:
        return refused
    core.world.store_message(message)
    record.followup_ids.append(message["id"])
    await core.dispatch_message("MESSAGE_CREATE", message)
    if request.query.get("wait") in ("true", "True", "1"):
        return json_response(message)
    return no_content()


async def get_webhook_message(request: web.Request) -> web.Response:
    return json_response(_webhook_message(request)[2])


async def edit_webhook_message(request: web.Request) -> web.Response:
    core, _, message = _webhook_message(request)
    result = await _edit(core, message, body_of(request), files_of(request))
    return result if isinstance(result, web.Response) else json_response(result)


async def delete_webhook_message(request: web.Request) -> web.Response:
    core, _, message = _webhook_message(request)
    core.world.remove_message(message)
    await core.dispatch_delete(message)
    return no_content()
