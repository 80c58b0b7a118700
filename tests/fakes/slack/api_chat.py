"""chat.* and reactions.add."""

from __future__ import annotations

from .model import Revision
from .state import SlackState
from .validation import check_message
from .wire import ApiError, Args, Body, require


def _check_content(state: SlackState, args: Args) -> None:
    if not any(args.get(k) for k in ("text", "blocks", "attachments")):
        raise ApiError("no_text")
    check_message(args, state.limits)


def post_message(state: SlackState, args: Args) -> Body:
    state.workspace.channel(args.get("channel"))
    _check_content(state, args)
    message = state.workspace.post_as_bot(
        args["channel"], text=args.get("text") or "", blocks=args.get("blocks"),
        thread_ts=args.get("thread_ts") or None, metadata=args.get("metadata"),
    )
    return {"ok": True, "channel": message.channel, "ts": message.ts,
            "message": {**message.to_api(), "app_id": state.identity.app_id,
                        "team": state.identity.team_id}}


def update(state: SlackState, args: Args) -> Body:
    require(args, "channel", "ts")
    message = state.workspace.find(args["channel"], args["ts"])
    if message.bot_id != state.identity.bot_id:
        raise ApiError("cant_update_message")
    _check_content(state, args)
    message.revisions.append(Revision(message.text, message.blocks, state.clock()))
    message.text = args.get("text") or ""
    if "blocks" in args:
        message.blocks = args["blocks"] or None
    message.edited_ts = state.workspace.next_ts()
    message.chunks, message.tasks, message.plan_title = [], {}, None  # the edit replaces a stream
    return {"ok": True, "channel": message.channel, "ts": message.ts, "text": message.text,
            "message": message.to_api()}


def delete(state: SlackState, args: Args) -> Body:
    require(args, "channel", "ts")
    message = state.workspace.find(args["channel"], args["ts"])
    if message.bot_id != state.identity.bot_id:
        raise ApiError("cant_delete_message")
    message.deleted = True
    return {"ok": True, "channel": message.channel, "ts": message.ts}


def post_ephemeral(state: SlackState, args: Args) -> Body:
    state.workspace.channel(args.get("channel"))
    state.workspace.user(args.get("user"))
    _check_content(state, args)
    ts = state.workspace.next_ts()
    state.workspace.ephemerals.append({**args, "message_ts": ts})
    return {"ok": True, "message_ts": ts}


def get_permalink(state: SlackState, args: Args) -> Body:
    require(args, "channel", "message_ts")
    state.workspace.channel(args["channel"])
    ts = str(args["message_ts"]).replace(".", "")
    domain = state.identity.team_domain
    link = f"https://{domain}.slack.com/archives/{args['channel']}/p{ts}"
    return {"ok": True, "channel": args["channel"], "permalink": link}


def add_reaction(state: SlackState, args: Args) -> Body:
    require(args, "channel", "timestamp", "name")
    state.workspace.channel(args["channel"])
    # Users' messages live in the events a test sends, not in the fake: any ts is accepted.
    key = (str(args["channel"]), str(args["timestamp"]))
    users = state.workspace.reactions.setdefault(key, {}).setdefault(str(args["name"]), [])
    if state.identity.bot_user_id in users:
        raise ApiError("already_reacted")
    users.append(state.identity.bot_user_id)
    return {"ok": True}


HANDLERS = {
    "chat.postMessage": post_message,
    "chat.update": update,
    "chat.delete": delete,
    "chat.postEphemeral": post_ephemeral,
    "chat.getPermalink": get_permalink,
    "reactions.add": add_reaction,
}
