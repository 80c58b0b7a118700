"""What Slack sends, typed at the edge (pure): every event, interaction, view and command.

`parse(body)` turns a request body (an Events API callback, an interaction payload, a slash
command's fields: HTTP and Socket Mode carry the same) into one typed value, or `Ignored` with
the reason when it is nothing the product uses: another event or `message` subtype, a
`view_closed`, a `block_suggestion`, a legacy `interactive_message`, or a shape with a field
missing, null or of another type. It never raises. `bolt_can_read(body)` says whether
slack-bolt itself can take the body: bolt reads some fields with `[...]` while it builds a
request, so those shapes are answered before it sees them (bots/slack/intake.py).

The shapes are Slack's (api.slack.com/events/message and its subtypes, /reference/interaction-
payloads); an edit (`message_changed`) is recognised from whichever of `message.ts`,
`previous_message.ts` and the event's own fields Slack sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from bots.fields import Json, first_text, items, obj, text
from core.conversation.vocabulary import Platform, ThreadKey

from . import ids
from .render.mrkdwn import from_slack

USER_SUBTYPES = (None, "file_share", "thread_broadcast")  # a user's words for the agent


@dataclass(frozen=True, slots=True)
class Ignored:
    """A payload the product does not use (acknowledged, logged at debug)."""

    reason: str


@dataclass(frozen=True, slots=True)
class SlackFile:
    """A file shared with a message: where the bot downloads it (`url_private`, with its
    token), and what Slack says it is (checked against its bytes before use)."""

    name: str
    mimetype: str | None
    size: int | None
    url: str | None  # None: nothing to download (an external file, a tombstone)


@dataclass(frozen=True, slots=True)
class MessageEvent:
    """An `app_mention`, or a `message` a user posted (plain, file share, thread broadcast)."""

    kind: Literal["app_mention", "message"]
    team: str
    channel: str
    channel_type: str | None
    user: str
    ts: str
    thread_ts: str | None
    text: str  # as Slack wrote it (mrkdwn, mentions as <@U…>)
    files: tuple[SlackFile, ...] = ()


@dataclass(frozen=True, slots=True)
class MessageEdit:
    """A `message_changed` event: the message `ts` now says `text`."""

    team: str
    channel: str
    channel_type: str | None
    edit_ts: str
    user: str | None
    bot_id: str | None
    ts: str
    thread_ts: str | None
    text: str
    previous_text: str


@dataclass(frozen=True, slots=True)
class Click:
    """A button or select of ours in a message, an ephemeral, a modal or the home tab."""

    team: str
    user: str
    channel: str | None
    thread_ts: str | None
    message_ts: str | None
    trigger_id: str
    action_id: str
    value: str | None
    view_id: str | None


@dataclass(frozen=True, slots=True)
class ViewSubmission:
    """A modal submitted: `values[block_id][action_id]` is what the user typed or chose."""

    team: str
    user: str
    callback_id: str
    view_id: str | None
    private_metadata: str
    values: Mapping[str, Mapping[str, str]]

    def value(self, block_id: str, action_id: str) -> str:
        return self.values.get(block_id, {}).get(action_id, "")


@dataclass(frozen=True, slots=True)
class SlashCommand:
    team: str
    channel: str
    user: str
    command: str
    text: str


@dataclass(frozen=True, slots=True)
class HomeOpened:
    """`app_home_opened`: a person opened one of the app's tabs (`messages`, `home`)."""

    team: str
    channel: str
    tab: str


@dataclass(frozen=True, slots=True)
class SessionStopped:
    """`agent_session_stopped`: a person pressed the native Stop of the thread's agent session
    (Slack stopped the app's open streams there, `streaming_message_ts`)."""

    team: str
    channel: str
    thread_ts: str
    user: str


Inbound = (MessageEvent | MessageEdit | Click | ViewSubmission | SlashCommand | HomeOpened
           | SessionStopped | Ignored)


def parse(body: object) -> Inbound:
    """The typed value of a request body, or why it is ignored."""
    if not isinstance(body, Mapping):
        return Ignored(f"a body of type {type(body).__name__}")
    if "command" in body:
        return slash_command(body)
    kind = body.get("type")
    if kind == "event_callback":
        return event(body)
    if kind == "block_actions":
        return click(body)
    if kind == "view_submission":
        return view_submission(body)
    return Ignored(f"a {kind if isinstance(kind, str) else 'typeless'} payload")


def event(body: Json) -> Inbound:
    inner, team = obj(body.get("event")), _team(body)
    kind, subtype = inner.get("type"), inner.get("subtype")
    if kind == "message" and subtype == "message_changed":
        return message_edit(team, inner)
    if kind == "app_mention" or (kind == "message" and subtype in USER_SUBTYPES):
        return message_event(team, inner)
    if kind == "app_home_opened":
        return HomeOpened(team, text(inner.get("channel")) or "", text(inner.get("tab")) or "")
    if kind == "agent_session_stopped":
        return session_stopped(team, inner)
    what = f"message subtype {subtype}" if kind == "message" else f"event {kind}"
    return Ignored(f"a {what}")


def message_event(team: str, event: Json) -> MessageEvent | Ignored:
    channel, user, ts = text(event.get("channel")), text(event.get("user")), text(event.get("ts"))
    if event.get("bot_id") is not None or not (channel and user and ts):
        return Ignored("a message without its channel, user or ts, or a bot's")
    kind: Literal["app_mention", "message"] = "app_mention" if event.get("type") == "app_mention" else "message"
    return MessageEvent(kind, team, channel, text(event.get("channel_type")), user, ts,
                        text(event.get("thread_ts")), text(event.get("text")) or "",
                        tuple(slack_file(obj(f)) for f in items(event.get("files"))))


def slack_file(file: Json) -> SlackFile:
    size = file.get("size")
    return SlackFile(
        name=first_text(file.get("name"), file.get("title")) or "file",
        mimetype=text(file.get("mimetype")),
        size=size if isinstance(size, int) and not isinstance(size, bool) else None,
        url=first_text(file.get("url_private_download"), file.get("url_private")))


def session_stopped(team: str, event: Json) -> SessionStopped | Ignored:
    channel, thread_ts = text(event.get("channel")), text(event.get("thread_ts"))
    if not (channel and thread_ts):
        return Ignored("an agent_session_stopped without its channel or thread_ts")
    return SessionStopped(team, channel, thread_ts, text(event.get("user")) or "")


def message_edit(team: str, event: Json) -> MessageEdit | Ignored:
    now, before = obj(event.get("message")), obj(event.get("previous_message"))
    channel = first_text(event.get("channel"), now.get("channel"), before.get("channel"))
    ts = first_text(now.get("ts"), before.get("ts"))
    edit_ts = first_text(event.get("ts"), event.get("event_ts"), obj(now.get("edited")).get("ts"))
    if not (channel and ts and edit_ts):
        return Ignored("a message_changed without the edited message's channel or ts")
    return MessageEdit(
        team, channel, text(event.get("channel_type")), edit_ts,
        user=first_text(now.get("user"), before.get("user")),
        bot_id=first_text(now.get("bot_id"), before.get("bot_id")), ts=ts,
        thread_ts=first_text(now.get("thread_ts"), before.get("thread_ts")),
        text=text(now.get("text")) or "", previous_text=text(before.get("text")) or "")


def click(body: Json) -> Click | Ignored:
    action = obj(next(iter(items(body.get("actions"))), None))
    action_id = text(action.get("action_id"))
    if action_id is None or not isinstance(body.get("actions"), list):
        return Ignored("a block_actions without an action_id")
    if not action_id.startswith(ids.OURS):
        return Ignored(f"a click on {action_id}, not one of ours")
    container, message = obj(body.get("container")), obj(body.get("message"))
    value = first_text(action.get("value"), obj(action.get("selected_option")).get("value"))
    return Click(
        team=_team(body), user=text(obj(body.get("user")).get("id")) or "",
        channel=first_text(obj(body.get("channel")).get("id"), container.get("channel_id")),
        thread_ts=first_text(container.get("thread_ts"), message.get("thread_ts")),
        message_ts=first_text(container.get("message_ts"), message.get("ts")),
        trigger_id=text(body.get("trigger_id")) or "", action_id=action_id, value=value,
        view_id=first_text(obj(body.get("view")).get("id"), container.get("view_id")),
    )


def view_submission(body: Json) -> ViewSubmission | Ignored:
    view = obj(body.get("view"))
    callback_id, user = text(view.get("callback_id")), text(obj(body.get("user")).get("id"))
    if callback_id is None or user is None:
        return Ignored("a view_submission without its callback_id or user")
    if not callback_id.startswith(ids.OURS):
        return Ignored(f"a view_submission of {callback_id}, not one of ours")
    values = {block: _inputs(actions) for block, actions in obj(obj(view.get("state")).get("values")).items()}
    return ViewSubmission(_team(body), user, callback_id, text(view.get("id")),
                          text(view.get("private_metadata")) or "", values)


def slash_command(body: Json) -> SlashCommand | Ignored:
    command, user = text(body.get("command")), text(body.get("user_id"))
    channel, team = text(body.get("channel_id")), text(body.get("team_id"))
    if command != ids.COMMAND:
        return Ignored(f"a slash command {command}, not ours")
    if not (user and channel and team):
        return Ignored("a slash command without its user, channel or team")
    return SlashCommand(team, channel, user, command, text(body.get("text")) or "")


def _inputs(actions: object) -> dict[str, str]:
    """action_id -> what an input of a submitted block holds (typed text, or a chosen option)."""
    found: dict[str, str] = {}
    for action_id, state in obj(actions).items():
        state = obj(state)
        value = first_text(state.get("value"), obj(state.get("selected_option")).get("value"))
        found[str(action_id)] = value or ""
    return found


def _team(body: Json) -> str:
    authorization = obj(next(iter(items(body.get("authorizations"))), None))
    return first_text(body.get("team_id"), obj(body.get("team")).get("id"), body.get("team"),
                      obj(body.get("user")).get("team_id"), authorization.get("team_id"),
                      obj(body.get("view")).get("team_id")) or ""


# --- what the product makes of a message ------------------------------------------------


@dataclass(frozen=True, slots=True)
class SlackIncoming:
    """A user's message (or the new text of an edited one) for the agent."""

    place: SlackPlace
    user: str
    ts: str
    text: str
    files: tuple[SlackFile, ...] = ()

    @property
    def key(self) -> tuple[str, ...]:
        return ("message", self.place.team, self.place.channel, self.ts)


def incoming(event: MessageEvent, bot_user_id: str | None) -> SlackIncoming:
    place = place_of(event.team, event.channel, event.ts, event.thread_ts, event.channel_type)
    return SlackIncoming(place, event.user, event.ts, from_slack(event.text, bot_user_id),
                    event.files)


def edited(edit: MessageEdit, bot_user_id: str | None) -> SlackIncoming | None:
    """The new text of an edit a user made to their own message (None for an unfurl, a bot's
    message, or a change that leaves the text as it was)."""
    if not edit.user or edit.bot_id or edit.user == bot_user_id or edit.text == edit.previous_text:
        return None
    place = place_of(edit.team, edit.channel, edit.ts, edit.thread_ts, edit.channel_type)
    return SlackIncoming(place, edit.user, edit.ts, from_slack(edit.text, bot_user_id))


# --- what slack-bolt itself can read ----------------------------------------------------

# bolt builds every request's context from these fields (slack_bolt/request/internals.py:
# `"id" in user`, `payload["event"].get(...)`, `len(payload["authorizations"])`), and its
# built-in middleware reads `body.get("event", {}).get("bot_id")`.
_IDS = ("user", "team", "channel", "enterprise")
_NESTED = ("event", "message", "previous_message", "item", "assistant_thread", "view")


def bolt_can_read(body: object, depth: int = 0) -> bool:
    """Whether slack-bolt can build a request of `body` and run its middleware on it."""
    if not isinstance(body, Mapping):
        return False
    if any(not isinstance(body.get(k), str | Mapping | type(None)) for k in _IDS):
        return False
    if "event" in body and not isinstance(body["event"], Mapping):
        return False
    lists = (body.get("authorizations"), body.get("response_urls"))
    if not all(isinstance(v, list | type(None)) for v in lists) or \
            not all(isinstance(v, Mapping) for v in items(body.get("response_urls"))[:1]):
        return False
    nested: list[Any] = [body.get(k) for k in _NESTED if isinstance(body.get(k), Mapping)]
    nested += list(items(body.get("authorizations")))[:1]
    return depth > 2 or all(bolt_can_read(n, depth + 1) for n in nested)


# --- places -------------------------------------------------------------------------------
# Where a Slack message lives and which conversation it belongs to (pure).
#
# A channel thread is one session (an @mention at the top level starts the thread). A DM is one
# session however the user threads in it; replies go where the user wrote.

@dataclass(frozen=True, slots=True)
class SlackPlace:
    team: str
    channel: str
    reply_thread: str | None  # thread_ts of the bot's replies (None: the DM's top level)
    key: ThreadKey

    @property
    def is_dm(self) -> bool:
        return self.key.thread == "" and self.channel.startswith("D")

    def opened_by(self, ts: str) -> bool:
        """Whether the message `ts` opens this thread (a channel's message outside any thread:
        the bot's replies start the thread under it), which then has no conversation yet."""
        return not self.is_dm and self.reply_thread == ts


def is_dm(channel: str, channel_type: str | None = None) -> bool:
    return channel_type == "im" or (channel_type is None and channel.startswith("D"))


def place_of(team: str, channel: str, ts: str, thread_ts: str | None,
             channel_type: str | None = None) -> SlackPlace:
    """The conversation of a message with timestamp `ts` (in thread `thread_ts`, if any)."""
    if is_dm(channel, channel_type):
        return SlackPlace(team, channel, thread_ts, ThreadKey(Platform.SLACK, team, channel, ""))
    thread = thread_ts or ts
    return SlackPlace(team, channel, thread, ThreadKey(Platform.SLACK, team, channel, thread))
