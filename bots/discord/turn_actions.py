"""Buttons of an answer: Regenerate, the version switcher, Stop (`core.conversation.turns`), 👍 / 👎."""

from __future__ import annotations

import discord

from bots.discord import ids
from bots.discord.boundary import tell
from bots.discord.updater import LiveUpdater
from core import feedback
from core.conversation import turns, views
from core.conversation.refusals import FINISHED, SWITCH_BUSY
from core.errors import Busy, Conflict, InvalidInput, NotFound
from core.models import Platform
from core.runtime.pool import RunPool


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
        try:
            message = await turns.switch_version(action.number())
        except Busy:
            await tell(interaction, SWITCH_BUSY)
            return
        await self._updater.route(await views.stored_update(message.id))

    async def feedback(self, interaction: discord.Interaction, action: ids.ActionId) -> None:
        """👍 / 👎: the clicker's rating of the answer (one per person, changeable)."""
        if len(action.args) != 2:
            raise InvalidInput("this button carries an unexpected value")
        value = feedback.value_of(action.args[1])
        await feedback.give(action.number(), Platform.DISCORD, str(interaction.user.id), value)
        await tell(interaction, feedback.THANKS[value])

    async def stop(self, interaction: discord.Interaction, action: ids.ActionId) -> None:
        """Stop the run, whichever replica drives it."""
        await interaction.response.defer()
        try:
            update = await turns.stop(self._pool, action.args[0])
        except (Conflict, NotFound):
            await tell(interaction, FINISHED)
            return
        if self._pool.view(update.run_id) is None:  # no run of ours will show its end: show it
            await self._updater.route(update)
