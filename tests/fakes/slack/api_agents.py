"""agents.sessions.setStatus / rename, and the native Stop of an agent session.

Slack's rules (docs.slack.dev/ai/agent-sessions): only an app declared as an agent has
sessions (any other gets `not_authorized`); a session is scoped to one thread and is created
by its first setStatus (`title` and `initiator_user_id` count only then, later ones are
ignored); a status is one of active / processing / suspended / closed; a title holds at
most 200 characters and is changed with agents.sessions.rename. While a session is
`processing` Slack shows a Stop button; pressing it stops the app's open streams in the
thread and sends `agent_session_stopped`, but leaves the status to the app.
"""

from __future__ import annotations

from typing import Any

from .state import SlackState
from .wire import ApiError, Args, Body, require

STATUSES = frozenset({"active", "processing", "suspended", "closed"})
MAX_TITLE = 200
NOT_AN_AGENT = "not_authorized"


def set_status(state: SlackState, args: Args) -> Body:
    require(args, "channel_id", "thread_ts", "status")
    state.workspace.channel(args["channel_id"])
    status = check_status(args["status"])
    title = args.get("title")
    if title is not None and not 0 < len(str(title)) <= MAX_TITLE:
        raise ApiError("invalid_arguments", detail=f"title: 1-{MAX_TITLE} characters")
    key = (str(args["channel_id"]), str(args["thread_ts"]))
    session = state.workspace.agent_sessions.setdefault(
        key, {"title": title, "initiator": args.get("initiator_user_id"), "history": []})
    session["status"] = status
    session["history"].append(status)
    return {"ok": True, "status": status, "title": session["title"]}


def rename(state: SlackState, args: Args) -> Body:
    require(args, "channel_id", "thread_ts", "title")
    state.workspace.channel(args["channel_id"])
    title = str(args["title"])
    if not 0 < len(title) <= MAX_TITLE:
        raise ApiError("invalid_arguments", detail=f"title: 1-{MAX_TITLE} characters")
    session = state.workspace.agent_sessions.get((str(args["channel_id"]), str(args["thread_ts"])))
    if session is None:
        raise ApiError("session_not_found")
    session["title"] = title
    return {"ok": True, "title": title}


def check_status(status: Any) -> str:
    if status not in STATUSES:
        raise ApiError("invalid_arguments", detail=f"status: one of {sorted(STATUSES)}")
    return str(status)


def end_by_stream(state: SlackState, channel: str, thread_ts: str | None, status: Any) -> None:
    """chat.stopStream's `session_status`: the thread's session moves with the stream."""
    if status is None:
        return
    session = state.workspace.agent_sessions.get((channel, str(thread_ts)))
    if session is None:
        raise ApiError("session_not_found")
    session["status"] = check_status(status)
    session["history"].append(session["status"])


def press_stop(state: SlackState, channel: str, thread_ts: str, user: str) -> dict[str, Any]:
    """A person presses the native Stop of the thread's processing session: Slack stops the
    app's open streams there and gives the `agent_session_stopped` event to deliver."""
    session = state.workspace.agent_sessions.get((channel, thread_ts))
    assert session is not None and session["status"] == "processing", \
        "Slack shows the Stop button only while the session is processing"
    stopped = []
    for message in state.workspace.thread(channel, thread_ts):
        if message.streaming and message.bot_id == state.identity.bot_id:
            message.streaming = False
            stopped.append(message.ts)
    return {"type": "agent_session_stopped", "channel": channel, "thread_ts": thread_ts,
            "user": user, "streaming_message_ts": stopped,
            "event_ts": state.workspace.next_ts()}


HANDLERS = {
    "agents.sessions.setStatus": set_status,
    "agents.sessions.rename": rename,
}
