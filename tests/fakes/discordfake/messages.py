"""Turning what the bot sends (JSON or multipart bodies) into stored messages, and edits."""

from __future__ import annotations

import copy
from typing import Any

from aiohttp import web

from tests.fakes import discord_payloads as dp

from .core import FakeCore
from .records import UploadedFile
from .responses import EMPTY_MESSAGE, FieldErrors, error, form_error
from .validation import check_message

Payload = dict[str, Any]
# Flags a bot may set: suppress embeds, ephemeral, suppress notifications, components v2.
SETTABLE_FLAGS = 4 | 64 | 4096 | (1 << 15)
LOADING = 1 << 7


def check_files(core: FakeCore, files: list[UploadedFile]) -> FieldErrors:
    limits = core.limits
    errors: FieldErrors = {}
    if len(files) > limits.files:
        errors["files"] = ("BASE_TYPE_MAX_LENGTH", f"Must be {limits.files} or fewer in length.")
    for i, upload in enumerate(files):
        if len(upload.data) > limits.file_size:
            message = f"File cannot be larger than {limits.file_size} bytes."
            errors[f"files.{i}"] = ("BASE_TYPE_MAX_LENGTH", message)
    return errors


def is_empty(message: Payload) -> bool:
    """Discord refuses a message with nothing to show (code 50006)."""
    keys = ("content", "embeds", "components", "attachments", "sticker_items", "poll")
    return not any(message.get(k) for k in keys) and not int(message.get("flags") or 0) & LOADING


def _attachments(
    core: FakeCore, channel_id: str, body: Payload, files: list[UploadedFile]
) -> list[Payload]:
    """New attachments for uploaded files; `body["attachments"]` may name them by index."""
    described = {str(a.get("id")): a for a in body.get("attachments") or []}
    made = []
    for index, upload in enumerate(files):
        meta = described.get(str(index), {})
        attachment_id = core.world.ids.next()
        filename = meta.get("filename") or upload.filename
        core.world.attachments[attachment_id] = upload.data
        url = core.attachment_url(channel_id, attachment_id, filename)
        attachment = dp.make_attachment(
            attachment_id, filename, len(upload.data), url, content_type=upload.content_type
        )
        if meta.get("description"):
            attachment["description"] = meta["description"]
        made.append(attachment)
    return made


def _embeds(body: Payload) -> list[Payload]:
    return [{"type": "rich", **embed} for embed in body.get("embeds") or []]


def compose(
    core: FakeCore, channel: Payload, body: Payload, files: list[UploadedFile], **extra: Any
) -> Payload:
    """A new bot message in `channel` from a create body (reply, mentions, files included)."""
    world = core.world
    reply_to = None
    reference = body.get("message_reference")
    if reference and str(reference.get("message_id")) in world.messages:
        reply_to = world.messages[str(reference["message_id"])]
    content = body.get("content") or ""
    return dp.make_message(
        id=world.ids.next(),
        channel_id=channel["id"],
        author=world.bot,
        content=content,
        mentions=world.mentions_in(content),
        embeds=_embeds(body),
        components=copy.deepcopy(body.get("components") or []),
        attachments=_attachments(core, channel["id"], body, files),
        reply_to=reply_to,
        flags=int(body.get("flags") or 0) & SETTABLE_FLAGS,
        tts=bool(body.get("tts")),
        nonce=body.get("nonce"),
        **extra,
    )


def edited(core: FakeCore, message: Payload, body: Payload, files: list[UploadedFile]) -> Payload:
    """A copy of `message` with an edit body applied (absent fields are kept)."""
    result = copy.deepcopy(message)
    if "content" in body:
        result["content"] = body["content"] or ""
        result["mentions"] = core.world.mentions_in(result["content"])
    if "embeds" in body:
        result["embeds"] = _embeds(body)
    if "components" in body:
        result["components"] = copy.deepcopy(body["components"] or [])
    if "flags" in body and body["flags"] is not None:
        settable = int(body["flags"]) & SETTABLE_FLAGS
        result["flags"] = (result["flags"] & ~SETTABLE_FLAGS) | settable
    if "attachments" in body or files:
        kept_ids = {str(a.get("id")) for a in body.get("attachments") or []}
        kept = message["attachments"]
        if "attachments" in body:
            kept = [a for a in kept if a["id"] in kept_ids]
        result["attachments"] = kept + _attachments(core, message["channel_id"], body, files)
    result["flags"] &= ~LOADING
    result["edited_timestamp"] = dp.iso_time()
    return result


def rejection(core: FakeCore, message: Payload, files: list[UploadedFile]) -> web.Response | None:
    """Discord's 400 for a message about to be stored (limits, empty message), or None."""
    errors = check_message(message, core.limits) | check_files(core, files)
    if errors:
        return form_error(errors)
    if is_empty(message):
        return error(400, EMPTY_MESSAGE, "Cannot send an empty message")
    return None
