"""Commands that start over: new (a fresh conversation here), reset (a fresh agent)."""

from __future__ import annotations

import discord

from bots.discord.commands.where import CommandPlaces
from bots.discord.targets import Targets
from core.bridge.port import Bridge
from core.conversation import commands

NEW_THREAD_NAME = "Conversation with Hermes"


class SessionCommands:
    def __init__(self, places: CommandPlaces, bridge: Bridge, targets: Targets) -> None:
        self._places = places
        self._bridge = bridge
        self._targets = targets

    async def new(self, interaction: discord.Interaction) -> None:
        """A fresh session for this thread or DM (keeping its model and skill); in a channel,
        in a new thread."""
        place = await self._places.place(interaction)
        old = await self._places.current(place)
        await interaction.response.defer(thinking=True)
        where = ""
        if not place.is_dm and place.thread is None:
            channel = interaction.channel
            assert isinstance(channel, discord.TextChannel)
            thread = await channel.create_thread(
                name=NEW_THREAD_NAME, type=discord.ChannelType.public_thread)
            place, where = place.with_thread(thread.id), f" in {thread.mention}"
        session = await commands.new_conversation(place.key(), old)
        self._targets.bound(session.id, place.target)
        await interaction.edit_original_response(
            content=f"🆕 New conversation started{where}. Earlier messages are not part of it.")

    async def reset(self, interaction: discord.Interaction) -> None:
        """A fresh agent (and memory notes) for this conversation; its messages stay."""
        session = await self._places.session(interaction)
        await interaction.response.defer(thinking=True)
        await commands.reset(self._bridge, session.id)
        await interaction.edit_original_response(
            content="♻️ Reset: the agent of this conversation starts afresh, with empty memory "
                    "notes. The messages here stay.")
