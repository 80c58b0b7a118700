"""Builders for what Slack sends TO the app: events, interactions, slash commands, signed.

The dicts are the payloads (Socket Mode carries them as they are); `event_request`,
`interaction_request` and `command_request` encode them as Slack's HTTP requests do (JSON,
form `payload=`, form fields) with valid v0 signatures.

    trigger = slack.new_trigger_id()
    req = interaction_request(make_block_action("clarify.custom", trigger_id=trigger), SECRET)
    await http.post(app_url, data=req.body, headers=req.headers)
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

TEAM_ID = "T0FAKE"
APP_ID = "A0FAKE"
BOT_USER_ID = "U0BOT"
USER_ID = "U0USER"
CHANNEL_ID = "C0CHAN"
DM_CHANNEL_ID = "D0DM"
Payload = dict[str, Any]

_serial = itertools.count(1)


def new_ts() -> str:
    """A user-side message ts, earlier than any the fake issues (1700000000.*)."""
    micros = next(_serial) * 100
    return f"{1_650_000_000 + micros // 1_000_000}.{micros % 1_000_000:06d}"


# --- events ---------------------------------------------------------------------------


def app_mention_event(text: str = "hello", *, user: str = USER_ID, channel: str = CHANNEL_ID,
                      ts: str | None = None, thread_ts: str | None = None,
                      bot_user_id: str = BOT_USER_ID) -> Payload:
    ts = ts or new_ts()
    event = {"type": "app_mention", "user": user, "text": f"<@{bot_user_id}> {text}",
             "ts": ts, "channel": channel, "event_ts": ts}
    return {**event, "thread_ts": thread_ts} if thread_ts else event


def thread_message_event(text: str = "and then?", *, thread_ts: str, user: str = USER_ID,
                         channel: str = CHANNEL_ID, ts: str | None = None) -> Payload:
    ts = ts or new_ts()
    return {"type": "message", "channel": channel, "channel_type": "channel", "user": user,
            "text": text, "ts": ts, "event_ts": ts, "thread_ts": thread_ts}


def dm_message_event(text: str = "hello", *, user: str = USER_ID, channel: str = DM_CHANNEL_ID,
                     ts: str | None = None, thread_ts: str | None = None) -> Payload:
    ts = ts or new_ts()
    event = {"type": "message", "channel": channel, "channel_type": "im", "user": user,
             "text": text, "ts": ts, "event_ts": ts}
    return {**event, "thread_ts": thread_ts} if thread_ts else event


def message_changed_event(text: str, *, message_ts: str, previous_text: str = "",
                          user: str = USER_ID, channel: str = CHANNEL_ID,
                          channel_type: str = "channel", thread_ts: str | None = None) -> Payload:
    """A user edited their message `message_ts` (Slack puts the new text in `message`)."""
    edit_ts = new_ts()
    threaded = {"thread_ts": thread_ts} if thread_ts else {}
    return {
        "type": "message", "subtype": "message_changed", "hidden": True, "channel": channel,
        "channel_type": channel_type, "ts": edit_ts, "event_ts": edit_ts,
        "message": {"type": "message", "user": user, "text": text, "ts": message_ts,
                    "edited": {"user": user, "ts": edit_ts}, **threaded},
        "previous_message": {"type": "message", "user": user, "text": previous_text,
                             "ts": message_ts, **threaded},
    }


_EVENT_KINDS = {
    "app_mention": app_mention_event,
    "thread_message": thread_message_event,
    "dm": dm_message_event,
    "message_changed": message_changed_event,
}


def make_slack_event(kind: str | Payload = "app_mention", *, team_id: str = TEAM_ID,
                     api_app_id: str = APP_ID, bot_user_id: str = BOT_USER_ID,
                     event_id: str | None = None, **fields: Any) -> Payload:
    """An Events API `event_callback`. `kind`: app_mention, thread_message, dm,
    message_changed (fields go to that builder), or an inner event dict."""
    if isinstance(kind, dict):
        event = kind
    elif kind == "app_mention":
        event = app_mention_event(bot_user_id=bot_user_id, **fields)
    else:
        event = _EVENT_KINDS[kind](**fields)
    return {
        "token": "verification-token", "team_id": team_id, "api_app_id": api_app_id,
        "event": event, "type": "event_callback", "event_id": event_id or f"Ev{next(_serial):08d}",
        "event_time": int(float(event.get("event_ts", time.time()))),
        "authorizations": [{"enterprise_id": None, "team_id": team_id, "user_id": bot_user_id,
                            "is_bot": True, "is_enterprise_install": False}],
        "is_ext_shared_channel": False, "event_context": f"4-fake-{next(_serial)}",
    }


# --- interactions ---------------------------------------------------------------------


def _user(user: str, team_id: str) -> Payload:
    return {"id": user, "username": user.lower(), "name": user.lower(), "team_id": team_id}


def make_block_action(action_id: str, value: str | None = None, *, block_id: str = "hermes",
                      action_type: str = "button", selected_option: Payload | None = None,
                      user: str = USER_ID, channel: str = CHANNEL_ID, message_ts: str = "",
                      thread_ts: str | None = None, message: Payload | None = None,
                      trigger_id: str = "0.0.unknown", response_url: str = "",
                      team_id: str = TEAM_ID, api_app_id: str = APP_ID) -> Payload:
    """A click on a button (or a select, with `selected_option`) in a bot message."""
    action: Payload = {"action_id": action_id, "block_id": block_id, "type": action_type,
                       "action_ts": new_ts()}
    if value is not None:
        action["value"] = value
    if selected_option is not None:
        action["selected_option"] = selected_option
    threaded = {"thread_ts": thread_ts} if thread_ts else {}
    container = {"type": "message", "message_ts": message_ts, "channel_id": channel,
                 "is_ephemeral": False, **threaded}
    return {
        "type": "block_actions", "user": _user(user, team_id), "api_app_id": api_app_id,
        "token": "verification-token", "container": container, "trigger_id": trigger_id,
        "team": {"id": team_id, "domain": "fake"}, "enterprise": None,
        "is_enterprise_install": False, "channel": {"id": channel, "name": channel.lower()},
        "message": message or {"type": "message", "ts": message_ts, "text": "",
                               "user": BOT_USER_ID, "bot_id": "B0BOT", **threaded},
        "state": {"values": {}}, "response_url": response_url, "actions": [action],
    }


def make_view_submission(callback_id: str, values: dict[str, dict[str, Any]] | None = None, *,
                         private_metadata: str = "", view_id: str = "V0VIEW",
                         user: str = USER_ID, trigger_id: str = "0.0.unknown",
                         team_id: str = TEAM_ID, api_app_id: str = APP_ID) -> Payload:
    """A modal submitted. `values`: {block_id: {action_id: "typed text" or a state dict}}."""
    state = {
        block: {action: v if isinstance(v, dict) else {"type": "plain_text_input", "value": v}
                for action, v in actions.items()}
        for block, actions in (values or {}).items()
    }
    view = {"id": view_id, "team_id": team_id, "type": "modal", "blocks": [],
            "private_metadata": private_metadata, "callback_id": callback_id,
            "state": {"values": state}, "hash": "1.hash", "title": {"type": "plain_text",
            "text": "Hermes"}, "root_view_id": view_id, "previous_view_id": None,
            "app_id": api_app_id, "bot_id": "B0BOT", "external_id": "",
            "clear_on_close": False, "notify_on_close": False}
    return {"type": "view_submission", "team": {"id": team_id, "domain": "fake"},
            "user": _user(user, team_id), "api_app_id": api_app_id, "token": "verification-token",
            "trigger_id": trigger_id, "view": view, "response_urls": [],
            "is_enterprise_install": False, "enterprise": None}


def make_slash_command(command: str = "/hermes", text: str = "", *, user: str = USER_ID,
                       channel: str = CHANNEL_ID, trigger_id: str = "0.0.unknown",
                       response_url: str = "", team_id: str = TEAM_ID,
                       api_app_id: str = APP_ID) -> dict[str, str]:
    """The form fields of a slash command invocation."""
    return {"token": "verification-token", "team_id": team_id, "team_domain": "fake",
            "channel_id": channel, "channel_name": channel.lower(), "user_id": user,
            "user_name": user.lower(), "command": command, "text": text,
            "api_app_id": api_app_id, "is_enterprise_install": "false",
            "response_url": response_url, "trigger_id": trigger_id}


# --- HTTP encoding and signing --------------------------------------------------------


@dataclass(frozen=True)
class SignedRequest:
    body: bytes
    headers: dict[str, str]


def sign_request(body: bytes, signing_secret: str, timestamp: int | None = None) -> dict[str, str]:
    """X-Slack-Request-Timestamp and the v0 HMAC-SHA256 X-Slack-Signature of `body`."""
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    base = b"v0:" + stamp.encode() + b":" + body
    digest = hmac.new(signing_secret.encode(), base, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": f"v0={digest}"}


def _signed(body: bytes, content_type: str, secret: str, timestamp: int | None) -> SignedRequest:
    return SignedRequest(body, {"Content-Type": content_type,
                                **sign_request(body, secret, timestamp)})


def event_request(payload: Payload, signing_secret: str, timestamp: int | None = None,
                  retry_num: int | None = None) -> SignedRequest:
    """An Events API delivery (JSON); `retry_num` adds Slack's retry headers."""
    request = _signed(json.dumps(payload).encode(), "application/json", signing_secret, timestamp)
    if retry_num is not None:
        request.headers.update({"X-Slack-Retry-Num": str(retry_num),
                                "X-Slack-Retry-Reason": "http_timeout"})
    return request


def interaction_request(payload: Payload, signing_secret: str,
                        timestamp: int | None = None) -> SignedRequest:
    """A block_actions / view_submission delivery: form field `payload` holding JSON."""
    body = urlencode({"payload": json.dumps(payload)}).encode()
    return _signed(body, "application/x-www-form-urlencoded", signing_secret, timestamp)


def command_request(payload: dict[str, str], signing_secret: str,
                    timestamp: int | None = None) -> SignedRequest:
    body = urlencode(payload).encode()
    return _signed(body, "application/x-www-form-urlencoded", signing_secret, timestamp)
