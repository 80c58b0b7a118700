"""chat.startStream / appendStream / stopStream: a message that grows while its stream is open.

State rules (Slack's): a stream is started in a thread (`thread_ts` is required); outside a DM
it needs `recipient_user_id` and `recipient_team_id`; append and stop work only while the
stream is open (else `message_not_in_streaming_state`); a stopped message is an ordinary one.
Stopping may move the thread's agent session too (`session_status`, api_agents.py).
Each `markdown_text` (argument or chunk) holds at most 12,000 characters.
"""

from __future__ import annotations

from typing import Any

from .api_agents import end_by_stream
from .state import SlackState
from .validation import check_blocks
from .wire import ApiError, Args, Body, require

MAX_MARKDOWN = 12_000
TASK_STATUSES = frozenset({"pending", "in_progress", "complete", "error"})
DISPLAY_MODES = frozenset({"timeline", "plan"})
NOT_STREAMING = "message_not_in_streaming_state"


def start_stream(state: SlackState, args: Args) -> Body:
    require(args, "channel", "thread_ts")
    channel = state.workspace.channel(args["channel"])
    if not channel["is_im"]:
        require(args, "recipient_user_id", "recipient_team_id")
    mode = args.get("task_display_mode")
    if mode is not None and mode not in DISPLAY_MODES:
        raise ApiError("invalid_arguments", detail="task_display_mode")
    chunks = _chunks(args, state)
    message = state.workspace.post_as_bot(args["channel"], text="", thread_ts=str(args["thread_ts"]))
    message.streaming = True
    message.task_display_mode = mode
    message.recipient = args.get("recipient_user_id")
    _apply(message, chunks)
    return {"ok": True, "channel": message.channel, "ts": message.ts}


def append_stream(state: SlackState, args: Args) -> Body:
    message = _open(state, args)
    _apply(message, _chunks(args, state))
    return {"ok": True, "channel": message.channel, "ts": message.ts}


def stop_stream(state: SlackState, args: Args) -> Body:
    message = _open(state, args)
    chunks = _chunks(args, state)
    if args.get("blocks") is not None:
        check_blocks(args["blocks"], state.limits.max_blocks, state.limits)
    end_by_stream(state, message.channel, message.thread_ts, args.get("session_status"))
    _apply(message, chunks)
    message.streaming = False
    if args.get("blocks"):
        message.blocks = list(args["blocks"])
    message.metadata = args.get("metadata") or message.metadata
    return {"ok": True, "channel": message.channel, "ts": message.ts,
            "message": message.to_api()}


def expire(state: SlackState, channel: str, ts: str) -> None:
    """Slack ends a stream left open too long: later appends and stops are refused."""
    state.workspace.find(channel, ts).streaming = False


def _open(state: SlackState, args: Args) -> Any:
    require(args, "channel", "ts")
    message = state.workspace.find(args["channel"], args["ts"])
    if message.bot_id != state.identity.bot_id or not message.streaming:
        raise ApiError(NOT_STREAMING)
    return message


def _chunks(args: Args, state: SlackState) -> list[dict[str, Any]]:
    """The call's chunks, `markdown_text` first as a chunk of its own; invalid ones refused."""
    chunks = args.get("chunks") or []
    if not isinstance(chunks, list) or not all(isinstance(c, dict) for c in chunks):
        raise ApiError("invalid_chunks")
    if args.get("markdown_text") is not None:
        chunks = [{"type": "markdown_text", "text": args["markdown_text"]}, *chunks]
    for chunk in chunks:
        _check_chunk(chunk, state)
    return chunks


def _check_chunk(chunk: dict[str, Any], state: SlackState) -> None:
    kind = chunk.get("type")
    if kind == "markdown_text":
        text = chunk.get("text")
        if not isinstance(text, str) or len(text) > MAX_MARKDOWN:
            raise ApiError("invalid_chunks", detail=f"markdown_text over {MAX_MARKDOWN} chars")
    elif kind == "task_update":
        if not chunk.get("id") or not chunk.get("title") or chunk.get("status") not in TASK_STATUSES:
            raise ApiError("invalid_chunks", detail="task_update needs id, title, status")
    elif kind == "plan_update":
        if not chunk.get("title"):
            raise ApiError("invalid_chunks", detail="plan_update needs a title")
    elif kind == "blocks":
        check_blocks(chunk.get("blocks"), state.limits.max_blocks, state.limits)
    else:
        raise ApiError("invalid_chunks", detail=f"unknown chunk type {kind!r}")


def _apply(message: Any, chunks: list[dict[str, Any]]) -> None:
    message.chunks.extend(chunks)
    for chunk in chunks:
        if chunk["type"] == "markdown_text":
            message.text += chunk["text"]
        elif chunk["type"] == "task_update":
            message.tasks[str(chunk["id"])] = chunk
        elif chunk["type"] == "plan_update":
            message.plan_title = chunk["title"]


HANDLERS = {
    "chat.startStream": start_stream,
    "chat.appendStream": append_stream,
    "chat.stopStream": stop_stream,
}
