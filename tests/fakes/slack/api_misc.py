"""auth.test, conversations.*, users.info, assistant.threads.*, apps.connections.open."""

from __future__ import annotations

import secrets

from .model import ts_key
from .state import SlackState
from .wire import ApiError, Args, Body, require

MAX_LOADING_MESSAGES = 10
MAX_PROMPTS = 4


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
    """An empty status clears it; `loading_messages` (at most 10) are kept beside it."""
    require(args, "channel_id", "thread_ts")
    state.workspace.channel(args["channel_id"])
    key = (str(args["channel_id"]), str(args["thread_ts"]))
    loading = args.get("loading_messages") or []
    if not isinstance(loading, list) or len(loading) > MAX_LOADING_MESSAGES:
        raise ApiError("invalid_arguments", detail="loading_messages: at most 10")
    status = str(args.get("status") or "")
    if status:
        state.workspace.thread_status[key] = status
        state.workspace.loading_messages[key] = [str(m) for m in loading]
    else:
        state.workspace.thread_status.pop(key, None)
        state.workspace.loading_messages.pop(key, None)
    return {"ok": True}


def set_suggested_prompts(state: SlackState, args: Args) -> Body:
    require(args, "channel_id", "prompts")
    state.workspace.channel(args["channel_id"])
    prompts = args["prompts"]
    if not isinstance(prompts, list) or not 0 < len(prompts) <= MAX_PROMPTS or not all(
            isinstance(p, dict) and p.get("title") and p.get("message") for p in prompts):
        raise ApiError("invalid_arguments", detail="prompts: 1-4 of {title, message}")
    key = (str(args["channel_id"]), str(args.get("thread_ts") or ""))
    state.workspace.suggested_prompts[key] = {"title": args.get("title"), "prompts": prompts}
    return {"ok": True}


def set_thread_title(state: SlackState, args: Args) -> Body:
    require(args, "channel_id", "thread_ts", "title")
    state.workspace.channel(args["channel_id"])
    state.workspace.thread_titles[(str(args["channel_id"]), str(args["thread_ts"]))] = str(
        args["title"])
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
    "assistant.threads.setSuggestedPrompts": set_suggested_prompts,
    "assistant.threads.setTitle": set_thread_title,
    "apps.connections.open": connections_open,
}
