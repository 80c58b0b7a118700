"""What people wrote before the bot was asked, on Discord, as context of a turn
(core/chat/thread_context.py, decided by core.conversation.written.earlier): a thread's messages
before the mention (`channel.history(limit=..., before=...)`, and the message the thread was
opened on when the history reaches its beginning), and the reply chain of a
message that replies to another (`message.reference.resolved`, else `fetch_message`, then
that message's own reference, up to the cap). The bot's own messages are left out, and a
reply chain stops at one (what came before it is the conversation with the bot); another
bot's message carries its name and is marked. A message out of reach (deleted, forbidden)
ends the chain there.
"""

from __future__ import annotations

import logging

import discord

from bots.discord.inbound import TURN_TYPES
from core.conversation.vocabulary import EarlierMessage

log = logging.getLogger(__name__)


def earlier(message: discord.Message) -> EarlierMessage:
    """A Discord message as context: the name people see, its words (mentions as names),
    when, its files' names."""
    return EarlierMessage(
        author=message.author.display_name, text=message.clean_content,
        at=message.created_at, files=tuple(a.filename for a in message.attachments),
        bot=message.author.bot, id=str(message.id))


class DiscordThreadHistory:
    """Reads the messages before one, for the core's context rule."""

    def __init__(self, client: discord.Client) -> None:
        self._client = client

    def _ours(self, message: discord.Message) -> bool:
        me = self._client.user
        return me is not None and message.author.id == me.id

    async def thread(self, message: discord.Message, limit: int) -> list[EarlierMessage]:
        """Up to `limit` messages of the message's thread before it, oldest first (people's
        and other bots' words; system messages left out)."""
        channel: object = message.channel
        if isinstance(channel, discord.PartialMessageable):  # a thread not in the cache
            channel = self._client.get_channel(channel.id) or await self._client.fetch_channel(
                channel.id)
        if not isinstance(channel, discord.Thread):
            return []
        newest_first = [m async for m in channel.history(limit=limit, before=message)]
        if len(newest_first) < limit and (starter := await self._starter(channel)) is not None:
            newest_first.append(starter)  # the thread's beginning is reached: what opened it
        return [earlier(m) for m in reversed(newest_first)
                if m.type in TURN_TYPES and not self._ours(m)]

    @staticmethod
    async def _starter(thread: discord.Thread) -> discord.Message | None:
        """The message a thread of a text channel was opened on (it has the thread's id and
        lives in the channel); None for a thread opened without one, or out of reach. A
        forum post's first message is in the thread itself."""
        parent = thread.parent
        if not isinstance(parent, discord.TextChannel):
            return None
        if thread.starter_message is not None:
            return thread.starter_message
        try:
            return await parent.fetch_message(thread.id)
        except (discord.NotFound, discord.Forbidden):
            return None

    async def replied(self, message: discord.Message, limit: int) -> list[EarlierMessage]:
        """The message it replies to, that one's, and so on: up to `limit`, oldest first."""
        found: list[EarlierMessage] = []
        current = message
        while len(found) < limit:
            target = await self._referenced(current)
            if target is None or self._ours(target):
                break
            found.append(earlier(target))
            current = target
        return found[::-1]

    async def _referenced(self, message: discord.Message) -> discord.Message | None:
        reference = message.reference  # a reply's (not a forward's, a pin's, a crosspost's)
        if message.type != discord.MessageType.reply or reference is None \
                or reference.message_id is None:
            return None
        if isinstance(reference.resolved, discord.Message):
            return reference.resolved
        if isinstance(reference.resolved, discord.DeletedReferencedMessage):
            return None
        channel = message.channel if reference.channel_id == message.channel.id else \
            self._client.get_channel(reference.channel_id)
        if not isinstance(channel, discord.abc.Messageable):
            return None
        try:
            return await channel.fetch_message(reference.message_id)
        except (discord.NotFound, discord.Forbidden) as error:
            log.info("message %s replied to is out of reach: %s", reference.message_id, error.text)
            return None
