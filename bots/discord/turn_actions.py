"""Buttons of an answer: Regenerate, the version switcher, Stop, 👍 / 👎."""

from __future__ import annotations

import discord

from bots.discord import ids
from bots.discord.boundary import tell
from bots.discord.stored import stored_update
from bots.discord.updater import LiveUpdater
from core import feedback, tree
from core.errors import Busy, InvalidInput, NotFound
from core.models import IN_FLIGHT, ChatMessage, Platform
from core.runtime.pool import RunPool
from core.session_queries import has_active_run

FINISHED = "That run has already finished."
ELSEWHERE = "Another instance of the bot is running that answer; try Stop again in a moment."


class TurnActions:
    def __init__(self, pool: RunPool, updater: LiveUpdater) -> None:
        self._pool = pool
        self._updater = updater

    async def regenerate(self, interaction: discord.Interaction, action: ids.ActionId) -> None:
        """A new version of the answer, shown live in the same messages."""
        await interaction.response.defer()
        await self._pool.regenerate(action.number(), author=str(interaction.user.id))

    async def version(self, interaction: discord.Interaction, action: ids.ActionId) -> None:
        """Show (and make active) another version of the answer."""
        await interaction.response.defer()
        message = await tree.get_message(action.number())
        if await has_active_run(message.session_id):
            raise Busy("a run is in flight in this conversation")
        await tree.activate(message.id)
        await self._updater.route(await stored_update(message.id))

    async def feedback(self, interaction: discord.Interaction, action: ids.ActionId) -> None:
        """👍 / 👎: the clicker's rating of the answer (one per person, changeable)."""
        if len(action.args) != 2:
            raise InvalidInput("this button carries an unexpected value")
        value = feedback.value_of(action.args[1])
        await feedback.give(action.number(), Platform.DISCORD, str(interaction.user.id), value)
        await tell(interaction, feedback.THANKS[value])

    async def stop(self, interaction: discord.Interaction, action: ids.ActionId) -> None:
        await interaction.response.defer()
        try:
            await self._pool.stop(action.args[0])
        except NotFound:
            elsewhere = await ChatMessage.filter(run_id=action.args[0], status__in=IN_FLIGHT).exists()
            await tell(interaction, ELSEWHERE if elsewhere else FINISHED)
