"""The session of a place: read its binding, or open a thread on a mention and bind it."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import discord

from bots.discord import places
from bots.discord.errors import CannotAnswerHere
from bots.discord.places import Place
from bots.discord.render.refusals import missing_permissions, missing_permissions_text
from bots.discord.targets import Targets
from core.conversation import bindings
from core.models import ChatSession
from core.sessions import session_for_thread

log = logging.getLogger(__name__)
NEEDED_TO_OPEN = ("view_channel", "create_public_threads", "send_messages_in_threads",
                  "embed_links", "read_message_history")
THREAD_ALREADY_CREATED = 160004
ARCHIVE_AFTER_MINUTES = 1440


@dataclass(frozen=True, slots=True)
class Found:
    session: ChatSession
    place: Place  # with the thread the bot opened, if it opened one


class SessionFinder:
    def __init__(self, client: discord.Client, targets: Targets) -> None:
        self._client = client
        self._targets = targets

    async def place_of(self, channel: object, guild: discord.Guild | None) -> Place | None:
        """The place of a channel; an uncached one is fetched first (to learn a thread's
        parent). None where the bot cannot see it (a guild it left, a thread closed to it)."""
        if isinstance(channel, discord.PartialMessageable):
            try:
                channel = await self._client.fetch_channel(channel.id)
            except (discord.NotFound, discord.Forbidden) as error:
                log.info("channel %s is out of the bot's reach: %s", channel.id, error.text)
                return None
        return places.place_of(channel, guild.id if guild else None)

    async def for_message(self, message: discord.Message, place: Place, mentioned: bool,
                          text: str) -> Found | None:
        """The session the message belongs to (None: the message is not for the bot)."""
        if place.is_dm or (place.thread is not None and mentioned):
            return await self._bind(place)
        if place.thread is not None:
            session = await bindings.bound_session(place.key())
            return Found(session, place) if session else None
        if not mentioned:
            return None
        thread = await self._open_thread(message, text)
        return await self._bind(place.with_thread(thread.id)) if thread else None

    async def _bind(self, place: Place) -> Found:
        session, _ = await session_for_thread(place.key())
        self._targets.bound(session.id, place.target)
        return Found(session, place)

    async def _open_thread(self, message: discord.Message, text: str) -> discord.Thread | None:
        """The thread opened on the message; None when the message was deleted meanwhile."""
        self._check_permissions(message)
        try:
            return await message.create_thread(
                name=places.thread_name(text), auto_archive_duration=ARCHIVE_AFTER_MINUTES)
        except discord.NotFound as error:
            log.info("message %s is gone, no thread opened on it: %s", message.id, error.text)
            return None
        except discord.Forbidden as error:
            text = f"🔒 I can't open a thread here: {error.text}"
            raise CannotAnswerHere(text, can_send=True) from error
        except discord.HTTPException as error:
            if error.code != THREAD_ALREADY_CREATED:
                raise
        thread = await self._client.fetch_channel(message.id)  # a thread opened on a message has its id
        assert isinstance(thread, discord.Thread)
        return thread

    @staticmethod
    def _check_permissions(message: discord.Message) -> None:
        me = message.guild.me if message.guild else None
        channel = message.channel
        if me is None or not isinstance(channel, discord.TextChannel):
            return
        granted = channel.permissions_for(me)
        missing = missing_permissions(granted, NEEDED_TO_OPEN)
        if missing:
            text = missing_permissions_text(channel.mention, missing)
            raise CannotAnswerHere(text, can_send=granted.send_messages and granted.view_channel)
