"""Messages people sent while no replica listened: Discord sends a message event once, to the
gateway session connected then. A RESUME replays what a session missed; a new session (a
start, a restart, a deploy, a shard taken over from a dead replica, a reconnect Discord could
not resume) gets nothing of what came before it.

So at each READY a client reads, in the threads and DMs of its guilds whose conversations were
active in the last CATCH_UP, the messages after the newest one written down there, and handles
each person's message that came after the bot's last message in that thread and was not
written down (`bindings.written_down`), as if it had just arrived: the conversation's ordinary
path (who may talk, busy threads, files, the first sign). A message the bot answered or refused
is followed by a message of the bot's, so it is not handled twice. In the channels those
threads were opened in, it reads the messages after the newest conversation opened there and
handles each mention of the bot that opened no conversation (no thread bound on it) and came
after the bot's last message there: a first mention sent while nothing listened.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from datetime import UTC, datetime, timedelta

import discord

from bots.discord.conversation import DM_WORKSPACE, DiscordConversation
from core.conversation import bindings
from core.conversation.bindings import Recent
from core.conversation.vocabulary import Platform, ThreadKey

log = logging.getLogger(__name__)
CATCH_UP = timedelta(hours=24)  # conversations active this recently are looked at
PLACES = 200  # at most this many threads and DMs a READY, the latest first
PER_PLACE = 50  # messages read after the newest written down in each


class CatchUp:
    """Reads what a client's gateway session missed, once per READY, in a task of its own."""

    def __init__(self, conversation: DiscordConversation) -> None:
        self._conversation = conversation
        self._tasks: dict[int, asyncio.Task[int]] = {}  # per client (its shard)
        self.handled = 0  # messages handled so (tests, the log)
        self.reads = 0  # catch-ups finished

    def start(self, client: discord.Client) -> None:
        """Catch `client` up (a READY); one read at a time per client."""
        running = self._tasks.get(id(client))
        if running is not None and not running.done():
            return
        task = asyncio.create_task(self._safely(client), name="discord-catch-up")
        self._tasks[id(client)] = task

    async def close(self) -> None:
        for task in self._tasks.values():
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        self._tasks.clear()

    async def _safely(self, client: discord.Client) -> int:
        try:
            return await self._run(client)
        except Exception:  # the database away, say: the next READY reads again
            log.exception("discord: catching up after READY failed")
            return 0

    async def _run(self, client: discord.Client) -> int:
        me = client.user
        if me is None:
            return 0
        workspaces = {str(guild.id) for guild in client.guilds}
        if client.shard_id in (None, 0):  # DMs come to the first shard
            workspaces.add(DM_WORKSPACE)
        handled = 0
        since = datetime.now(UTC) - CATCH_UP
        recent = await bindings.active_since(Platform.DISCORD, since, workspaces, PLACES)
        opened: dict[ThreadKey, int] = {}  # a guild channel: the newest thread opened in it
        for place in recent:
            handled += await self._read(place.key, self._place(client, me.id, place))
            if place.key.thread and place.key.workspace != DM_WORKSPACE:
                parent = ThreadKey(Platform.DISCORD, place.key.workspace, place.key.channel)
                opened[parent] = max(opened.get(parent, 0), int(place.key.thread))
        for parent, newest in opened.items():
            handled += await self._read(parent, self._channel(client, me.id, parent, newest))
        if handled:
            log.info("discord: %d message(s) sent while no replica listened handled now", handled)
        self.handled += handled
        self.reads += 1
        return handled

    @staticmethod
    async def _read(key: ThreadKey, reading: Awaitable[int]) -> int:
        """How many messages reading one place handled; a place that fails is logged and
        keeps no other from being read."""
        try:
            return await reading
        except discord.HTTPException as error:  # deleted, or closed to the bot now
            log.info("discord: cannot read %s to catch up (%s)", key, error.text)
        except Exception:
            log.exception("discord: catching up %s failed", key)
        return 0

    async def _place(self, client: discord.Client, me: int, recent: Recent) -> int:
        """A thread or DM: each person's message not written down."""
        key = recent.key
        handled = 0
        for message in await _unheard(client, me, int(key.thread or key.channel),
                                      max(recent.newest, int(key.thread or 0))):
            if not await bindings.written_down(recent.session_id, str(message.id)):
                handled += await self._handle(message)
        return handled

    async def _channel(self, client: discord.Client, me: int, parent: ThreadKey,
                       newest_thread: int) -> int:
        """A guild channel: each mention of the bot that opened no conversation."""
        handled = 0
        for message in await _unheard(client, me, int(parent.channel), newest_thread):
            opened_on = ThreadKey(Platform.DISCORD, parent.workspace, parent.channel,
                                  str(message.id))  # a thread opened on a message has its id
            if me in message.raw_mentions and await bindings.bound_session(opened_on) is None:
                handled += await self._handle(message)
        return handled

    async def _handle(self, message: discord.Message) -> int:
        log.info("discord: message %s in %s came while no replica listened: handling it",
                 message.id, message.channel.id)
        await self._conversation.on_message(message)
        return 1


async def _unheard(client: discord.Client, me: int, target: int,
                   after: int) -> list[discord.Message]:
    """People's messages in channel `target` after message `after` and after the bot's last
    message there, oldest first (at most PER_PLACE read)."""
    if not after:
        return []
    channel = client.get_channel(target) or await client.fetch_channel(target)
    if not isinstance(channel, discord.abc.Messageable):
        return []
    messages = [m async for m in channel.history(limit=PER_PLACE, after=discord.Object(after),
                                                 oldest_first=True)]
    ours = [i for i, m in enumerate(messages) if m.author.id == me]
    return [m for m in messages[ours[-1] + 1 if ours else 0:] if not m.author.bot]
