"""A thread's name: after the question when the bot opens it, then its conversation's title.

The rule "the session's title changed -> tell its thread" is core's
(`core.conversation.titles`); here is what Discord does with it. As a turn ends, a thread the
bot created (a mention's thread, `/hermes new`'s thread or forum post) is renamed to its
session's title, cleaned and bounded to Discord's 100 characters, once per title. A thread
or forum post a person created keeps the name they gave it, and so does a thread whose name
already begins with the title (the bot named it after the question, whose first words the
automatic title is). Renames have their own budget (Discord allows two per ten minutes per
thread) and outbox, so they never delay an answer; a refusal (no Manage Threads where it is
needed, the thread gone) is said once and skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial

import discord

from bots.discord.delivery import Outbox, Permit, Refusals, Writer
from core.conversation import titles
from core.edge.ratelimit import Limit
from core.text.safe_text import shortened

log = logging.getLogger(__name__)
THREAD_NAME = 100  # Discord's limit of a thread's name
NEW_THREAD_NAME = "Conversation with Hermes"
RENAME_LIMIT = Limit(per_second=2 / 600, burst=2)


def thread_name(text: str) -> str:
    """A thread's name from a question or a title: one line of printable characters, at
    most 100 of them, cut after a whole word (an ellipsis marks a cut)."""
    line = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return shortened(line, THREAD_NAME) if line else NEW_THREAD_NAME


def renamable(channel: object, bot_id: int | None, title: str) -> bool:
    """Whether the bot renames this channel to `title`: a thread it created, not already
    named with the title's words."""
    if not isinstance(channel, discord.Thread) or bot_id is None or channel.owner_id != bot_id:
        return False
    name = thread_name(title)
    return channel.name != name and not channel.name.startswith(name.removesuffix("…"))


class ThreadTitlePresenter:
    """`cached` is a channel as this replica's gateway caches have it (None: not there). The
    client writing here may have no cache of its own (sharded, it writes by REST alone)."""

    def __init__(self, client: discord.Client, writer: Writer, outbox: Outbox,
                 cached: Callable[[int], object | None]) -> None:
        self._client = client
        self._cached = cached
        self._writer = writer
        self._outbox = outbox
        self._shown = titles.ShownTitles()
        self._refusals = Refusals()

    def _bot_id(self) -> int | None:
        return self._client.user.id if self._client.user else None

    async def show(self, session_id: int, channel_id: int) -> None:
        """A turn of the session ended in `channel_id`: name the thread after a new title."""
        title = await titles.to_show(self._shown, channel_id, session_id)
        if title is None:
            return
        channel = self._cached(channel_id)  # not cached: the job fetches it
        if channel is not None and not renamable(channel, self._bot_id(), title):
            return
        job = partial(self._rename, channel_id, title)
        self._outbox.offer(channel_id, ("title", channel_id), job)

    async def _rename(self, channel_id: int, title: str, permit: Permit) -> None:
        async with self._refusals.skipping("renaming a thread", channel_id):
            channel = self._cached(channel_id) or await self._client.fetch_channel(channel_id)
            if isinstance(channel, discord.Thread) and renamable(channel, self._bot_id(), title):
                await self._writer.rename(permit, channel, thread_name(title))
