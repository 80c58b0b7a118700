"""Where a Slack message lives and which conversation it belongs to (pure).

A channel thread is one session (an @mention at the top level starts the thread). A DM is one
session however the user threads in it; replies go where the user wrote.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.models import Platform
from core.sessions import ThreadKey


@dataclass(frozen=True, slots=True)
class Place:
    team: str
    channel: str
    reply_thread: str | None  # thread_ts of the bot's replies (None: the DM's top level)
    key: ThreadKey

    @property
    def is_dm(self) -> bool:
        return self.key.thread == "" and self.channel.startswith("D")


def is_dm(channel: str, channel_type: str | None = None) -> bool:
    return channel_type == "im" or (channel_type is None and channel.startswith("D"))


def place_of(team: str, channel: str, ts: str, thread_ts: str | None,
             channel_type: str | None = None) -> Place:
    """The conversation of a message with timestamp `ts` (in thread `thread_ts`, if any)."""
    if is_dm(channel, channel_type):
        return Place(team, channel, thread_ts, ThreadKey(Platform.SLACK, team, channel, ""))
    thread = thread_ts or ts
    return Place(team, channel, thread, ThreadKey(Platform.SLACK, team, channel, thread))

