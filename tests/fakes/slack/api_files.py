"""The upload flow of slack_sdk's files_upload_v2: get a URL, POST the bytes, complete."""

from __future__ import annotations

from typing import Any

from .state import SlackState, StoredFile
from .wire import ApiError, Args, Body, require


def get_upload_url(state: SlackState, args: Args) -> Body:
    require(args, "filename", "length")
    stored = StoredFile(
        id=state.new_id("F"), filename=str(args["filename"]), length=int(args["length"]),
        alt_txt=args.get("alt_txt"), snippet_type=args.get("snippet_type"),
    )
    state.files[stored.id] = stored
    upload_id = state.new_id("u")
    state.uploads[upload_id] = stored.id
    return {"ok": True, "file_id": stored.id,
            "upload_url": f"{state.base_url}upload/v1/{upload_id}"}


def receive_upload(state: SlackState, upload_id: str, content: bytes) -> str | None:
    """What the upload URL answers (plain text), or None for an unknown URL."""
    file_id = state.uploads.pop(upload_id, None)
    if file_id is None:
        return None
    state.files[file_id].content = content
    return f"OK - {len(content)}"


def complete_upload(state: SlackState, args: Args) -> Body:
    require(args, "files")
    entries: list[dict[str, Any]] = args["files"]
    stored = [_uploaded(state, entry) for entry in entries]
    api_files = [f.to_api(state.base_url) for f in stored]
    channel = args.get("channel_id") or args.get("channels")
    if channel:
        state.workspace.post_as_bot(
            str(channel).split(",")[0], text=args.get("initial_comment") or "",
            thread_ts=args.get("thread_ts") or None, files=api_files,
        )
    return {"ok": True, "files": api_files}


def _uploaded(state: SlackState, entry: dict[str, Any]) -> StoredFile:
    stored = state.files.get(str(entry.get("id")))
    if stored is None or stored.content is None:
        raise ApiError("file_not_found")
    stored.title = entry.get("title") or stored.title
    return stored


HANDLERS = {
    "files.getUploadURLExternal": get_upload_url,
    "files.completeUploadExternal": complete_upload,
}
