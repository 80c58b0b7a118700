"""A thread's name follows its conversation's title.

The rule "the session's title changed -> tell its thread" is core's
(`core.conversation.titles`); which threads the bot renames, and to what, is
bots/discord/render/titles.py. As a turn ends, a thread the bot created is renamed to its
session's title, once per title. Renames have their own budget (Discord allows two per ten
minutes per thread) and outbox, so they never delay an answer; a refusal (no Manage Threads
where it is needed, the thread gone) is said once and skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import discord

from bots.discord.delivery.budgets import Permit
from bots.discord.delivery.outbox import Outbox
from bots.discord.delivery.writer import Refusals, Writer
from bots.discord.render.titles import renamable, thread_name
from core.conversation import titles


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
