"""What Slack sends, typed at the edge: a user's message, a click, a modal submission."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .mrkdwn import from_slack
from .places import Place, place_of


@dataclass(frozen=True, slots=True)
class Incoming:
    """A user's message (or the new text of an edited one) for the agent."""

    place: Place
    user: str
    ts: str
    text: str

    @property
    def key(self) -> tuple[str, ...]:
        return ("message", self.place.team, self.place.channel, self.ts)


def incoming(team: str, event: dict[str, Any], bot_user_id: str | None) -> Incoming | None:
    """A plain message or mention event; None for what is not a user's message."""
    if not event.get("user") or event.get("bot_id") or not event.get("ts"):
        return None
    place = place_of(team, event["channel"], event["ts"], event.get("thread_ts"),
                     event.get("channel_type"))
    return Incoming(place, event["user"], event["ts"], from_slack(event.get("text") or "", bot_user_id))


def edited(team: str, event: dict[str, Any], bot_user_id: str | None) -> Incoming | None:
    """The new text of a `message_changed` event, when a user edited their own message."""
    message = event.get("message") or {}
    before = event.get("previous_message") or {}
    if not message.get("user") or message.get("bot_id") or message.get("user") == bot_user_id:
        return None
    if (message.get("text") or "") == (before.get("text") or ""):
        return None  # an unfurl or other change that is not an edit of the text
    place = place_of(team, event["channel"], message["ts"], message.get("thread_ts"),
                     event.get("channel_type"))
    return Incoming(place, message["user"], message["ts"], from_slack(message.get("text") or "", bot_user_id))


@dataclass(frozen=True, slots=True)
class Click:
    """A button or select in one of our messages or modals."""

    team: str
    user: str
    channel: str | None
    thread_ts: str | None
    message_ts: str | None
    trigger_id: str
    action_id: str
    value: str | None
    view_id: str | None


def click(body: dict[str, Any]) -> Click:
    action = (body.get("actions") or [{}])[0]
    container = body.get("container") or {}
    channel = (body.get("channel") or {}).get("id") or container.get("channel_id")
    message = body.get("message") or {}
    value = action.get("value") or (action.get("selected_option") or {}).get("value")
    return Click(
        team=(body.get("team") or {}).get("id") or body.get("user", {}).get("team_id", ""),
        user=(body.get("user") or {}).get("id", ""), channel=channel,
        thread_ts=container.get("thread_ts") or message.get("thread_ts"),
        message_ts=container.get("message_ts") or message.get("ts"),
        trigger_id=body.get("trigger_id", ""), action_id=action.get("action_id", ""), value=value,
        view_id=(body.get("view") or {}).get("id"),
    )
