"""The fake workspace in memory: who the bot is, channels, users and messages with edits."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .wire import ApiError

_CHANNEL_ID = re.compile(r"^[CDG][A-Z0-9]+$")
_USER_ID = re.compile(r"^[UW][A-Z0-9]+$")


@dataclass(frozen=True)
class Identity:
    team_id: str = "T0FAKE"
    team_domain: str = "fake"
    bot_user_id: str = "U0BOT"
    bot_id: str = "B0BOT"
    app_id: str = "A0FAKE"
    bot_name: str = "hermes"


@dataclass(frozen=True)
class Revision:
    """A message as it was before an edit."""

    text: str
    blocks: list[dict[str, Any]] | None
    at: float


@dataclass
class Message:
    channel: str
    ts: str
    text: str = ""
    blocks: list[dict[str, Any]] | None = None
    user: str | None = None
    bot_id: str | None = None
    thread_ts: str | None = None
    files: list[dict[str, Any]] = field(default_factory=list)
    revisions: list[Revision] = field(default_factory=list)  # oldest first
    edited_ts: str | None = None
    deleted: bool = False
    metadata: dict[str, Any] | None = None
    # A streamed message (chat.startStream): open while `streaming`; its chunks as received,
    # the newest state of each task by id, the plan's title.
    streaming: bool = False
    task_display_mode: str | None = None
    recipient: str | None = None
    chunks: list[dict[str, Any]] = field(default_factory=list)
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    plan_title: str | None = None

    def to_api(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": "message", "ts": self.ts, "text": self.text}
        optional = {"user": self.user, "bot_id": self.bot_id, "thread_ts": self.thread_ts,
                    "blocks": self.blocks, "files": self.files or None, "metadata": self.metadata}
        data.update({k: v for k, v in optional.items() if v is not None})
        if self.edited_ts:
            data["edited"] = {"user": self.user, "ts": self.edited_ts}
        return data


def ts_key(ts: str) -> tuple[int, int]:
    seconds, _, micros = ts.partition(".")
    return int(seconds), int(micros or 0)


@dataclass
class Workspace:
    identity: Identity = field(default_factory=Identity)
    channels: dict[str, dict[str, Any]] = field(default_factory=dict)
    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    messages: dict[tuple[str, str], Message] = field(default_factory=dict)
    ephemerals: list[dict[str, Any]] = field(default_factory=list)
    thread_status: dict[tuple[str, str], str] = field(default_factory=dict)
    loading_messages: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    suggested_prompts: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    thread_titles: dict[tuple[str, str], str] = field(default_factory=dict)
    # (channel, thread_ts) -> the agent session: status, title, initiator, history of statuses
    agent_sessions: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    reactions: dict[tuple[str, str], dict[str, list[str]]] = field(default_factory=dict)
    ts_base: int = 1_700_000_000
    _serial: int = 0

    def next_ts(self) -> str:
        """Monotonic message timestamps: 1700000000.000100, 1700000000.000200, ..."""
        self._serial += 1
        micros = self._serial * 100
        return f"{self.ts_base + micros // 1_000_000}.{micros % 1_000_000:06d}"

    def channel(self, channel_id: Any) -> dict[str, Any]:
        """A channel; any well-formed id is known on first use (C public, G private, D im)."""
        if not isinstance(channel_id, str) or not _CHANNEL_ID.match(channel_id):
            raise ApiError("channel_not_found")
        if channel_id not in self.channels:
            self.add_channel(channel_id)
        return self.channels[channel_id]

    def add_channel(self, channel_id: str, name: str | None = None, **extra: Any) -> dict[str, Any]:
        kind = channel_id[0]
        self.channels[channel_id] = {
            "id": channel_id, "name": name or channel_id.lower(), "is_channel": kind == "C",
            "is_group": kind == "G", "is_im": kind == "D", "is_private": kind != "C",
            "is_member": True, "is_archived": False, "created": self.ts_base, **extra,
        }
        return self.channels[channel_id]

    def user(self, user_id: Any) -> dict[str, Any]:
        """A user; any well-formed id is known on first use."""
        if not isinstance(user_id, str) or not _USER_ID.match(user_id):
            raise ApiError("user_not_found")
        if user_id not in self.users:
            self.add_user(user_id)
        return self.users[user_id]

    def add_user(self, user_id: str, name: str | None = None, **extra: Any) -> dict[str, Any]:
        name = name or user_id.lower()
        self.users[user_id] = {
            "id": user_id, "team_id": self.identity.team_id, "name": name, "real_name": name,
            "tz": "UTC", "is_bot": False, "deleted": False,
            "profile": {"real_name": name, "display_name": name}, **extra,
        }
        return self.users[user_id]

    def add_message(self, channel: str, **fields: Any) -> Message:
        self.channel(channel)
        message = Message(channel=channel, ts=fields.pop("ts", None) or self.next_ts(), **fields)
        self.messages[(channel, message.ts)] = message
        return message

    def post_as_bot(self, channel: str, **fields: Any) -> Message:
        """A bot message; a reply in a thread clears the thread's status, as in Slack."""
        message = self.add_message(channel, user=self.identity.bot_user_id,
                                   bot_id=self.identity.bot_id, **fields)
        if message.thread_ts:
            self.thread_status.pop((channel, message.thread_ts), None)
            self.loading_messages.pop((channel, message.thread_ts), None)
        return message

    def find(self, channel: Any, ts: Any) -> Message:
        message = self.messages.get((str(channel), str(ts)))
        if message is None or message.deleted:
            raise ApiError("message_not_found")
        return message

    def thread(self, channel: str, thread_ts: str) -> list[Message]:
        """The parent (when known) and its replies, oldest first, deleted ones left out."""
        found = [m for (c, ts), m in self.messages.items() if c == channel and not m.deleted
                 and (ts == thread_ts or m.thread_ts == thread_ts)]
        return sorted(found, key=lambda m: ts_key(m.ts))

    def history(self, channel: str) -> list[Message]:
        """Every live message of a channel (thread replies included), oldest first."""
        found = [m for (c, _), m in self.messages.items() if c == channel and not m.deleted]
        return sorted(found, key=lambda m: ts_key(m.ts))
