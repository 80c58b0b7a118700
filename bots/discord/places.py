"""Where a conversation lives on Discord: a DM channel, or a thread of a guild channel."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

import discord

from core.models import Platform
from core.sessions import ThreadKey

DM_WORKSPACE = "dm"
THREAD_NAME = 100


@dataclass(frozen=True, slots=True)
class Place:
    """A DM (guild None), a guild text channel (thread ""), or a thread of one."""

    guild: int | None
    channel: int
    thread: int | None = None

    @property
    def is_dm(self) -> bool:
        return self.guild is None

    @property
    def target(self) -> int:
        """The channel the bot writes to: the thread if there is one."""
        return self.thread or self.channel

    def key(self) -> ThreadKey:
        workspace = DM_WORKSPACE if self.guild is None else str(self.guild)
        return ThreadKey(Platform.DISCORD, workspace, str(self.channel), str(self.thread or ""))

    def with_thread(self, thread: int) -> Place:
        return Place(self.guild, self.channel, thread)


def place_of(channel: object, guild_id: int | None) -> Place | None:
    """The place of a channel discord.py gave us; None for kinds the bot does not talk in."""
    if isinstance(channel, discord.Thread):
        return Place(guild_id or channel.guild.id, channel.parent_id, channel.id)
    if isinstance(channel, discord.DMChannel):
        return Place(None, channel.id)
    if isinstance(channel, discord.TextChannel):
        return Place(guild_id or channel.guild.id, channel.id)
    return None


def allowed(place: Place, channels: Collection[str]) -> bool:
    """DISCORD_CHANNELS: unset allows everything; else listed channels (and their threads),
    and DMs only when the list holds "dm"."""
    if not channels:
        return True
    if place.is_dm:
        return DM_WORKSPACE in channels
    return str(place.channel) in channels or str(place.target) in channels


def prompt_text(content: str, bot_id: int) -> str:
    """The message without the bot's mention(s)."""
    return re.sub(rf"<@!?{bot_id}>", " ", content).strip()


def thread_name(text: str) -> str:
    """A thread named after the question (Discord allows 100 characters)."""
    line = " ".join(text.split())
    if not line:
        return "Conversation with Hermes"
    return line if len(line) <= THREAD_NAME else line[: THREAD_NAME - 1] + "…"
