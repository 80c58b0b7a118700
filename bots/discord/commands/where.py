"""The place and session a slash command is used in."""

from __future__ import annotations

import discord

from bots.discord import places
from bots.discord.places import Place
from bots.discord.sessions import SessionFinder
from core.conversation import bindings
from core.conversation.refusals import NO_CONVERSATION, NOT_HERE
from core.errors import InvalidInput, NotFound
from core.models import ChatSession
from core.sessions import session_for_thread


class CommandPlaces:
    def __init__(self, sessions: SessionFinder, allow_list: tuple[str, ...]) -> None:
        self._sessions = sessions
        self._allow_list = allow_list

    async def place(self, interaction: discord.Interaction) -> Place:
        guild = interaction.guild
        place = await self._sessions.place_of(interaction.channel, guild)
        if place is None or not places.allowed(place, self._allow_list):
            raise InvalidInput(NOT_HERE)
        return place

    async def current(self, place: Place) -> ChatSession | None:
        """The conversation bound to a thread or DM, if any (a channel has none)."""
        if place.is_dm or place.thread is not None:
            return await bindings.bound_session(place.key())
        return None

    async def session(self, interaction: discord.Interaction) -> ChatSession:
        """The conversation of this thread or DM (a DM always has one)."""
        place = await self.place(interaction)
        if place.is_dm:
            session, _ = await session_for_thread(place.key())
            return session
        session = await self.current(place)
        if session is None:
            raise NotFound(NO_CONVERSATION)
        return session
