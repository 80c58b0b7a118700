"""auth.test, conversations.*, users.info, assistant.threads.setStatus, apps.connections.open."""

from __future__ import annotations

import secrets

from .model import ts_key
from .state import SlackState
from .wire import ApiError, Args, Body, require


def auth_test(state: SlackState, args: Args) -> Body:
    identity = state.identity
    return {
        "ok": True, "url": f"https://{identity.team_domain}.slack.com/",
        "team": "Fake Team", "user": identity.bot_name, "team_id": identity.team_id,
        "user_id": identity.bot_user_id, "bot_id": identity.bot_id,
        "is_enterprise_install": False,
    }


def conversations_info(state: SlackState, args: Args) -> Body:
    return {"ok": True, "channel": state.workspace.channel(args.get("channel"))}


def conversations_replies(state: SlackState, args: Args) -> Body:
    require(args, "channel", "ts")
    state.workspace.channel(args["channel"])
    thread = state.workspace.thread(args["channel"], str(args["ts"]))
    if not thread:
        raise ApiError("thread_not_found")
    start = int(args.get("cursor") or 0)
    limit = int(args.get("limit") or 1000)
    page = thread[start:start + limit]
    more = start + limit < len(thread)
    messages = [m.to_api() for m in page]
    parent = next((m for m in messages if m["ts"] == str(args["ts"])), None)
    if parent is not None:
        replies = [m for m in thread if m.ts != parent["ts"]]
        parent.update(thread_ts=parent["ts"], reply_count=len(replies))
        if replies:
            parent["latest_reply"] = max((m.ts for m in replies), key=ts_key)
    return {"ok": True, "messages": messages, "has_more": more,
            "response_metadata": {"next_cursor": str(start + limit) if more else ""}}


def users_info(state: SlackState, args: Args) -> Body:
    return {"ok": True, "user": state.workspace.user(args.get("user"))}


def set_thread_status(state: SlackState, args: Args) -> Body:
    require(args, "channel_id", "thread_ts")
    state.workspace.channel(args["channel_id"])
    state.workspace.thread_status[(args["channel_id"], str(args["thread_ts"]))] = str(
        args.get("status") or ""
    )
    return {"ok": True}


def connections_open(state: SlackState, args: Args) -> Body:
    ticket = secrets.token_hex(8)
    state.tickets.add(ticket)
    ws_base = state.base_url.replace("http://", "ws://", 1)
    return {"ok": True, "url": f"{ws_base}link/?ticket={ticket}&app_id={state.identity.app_id}"}


HANDLERS = {
    "auth.test": auth_test,
    "conversations.info": conversations_info,
    "conversations.replies": conversations_replies,
    "users.info": users_info,
    "assistant.threads.setStatus": set_thread_status,
    "apps.connections.open": connections_open,
}
