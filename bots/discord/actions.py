"""Clicks, selections and modal submissions: decode the custom id, run its handler inside the
error boundary. Handlers acknowledge within Discord's 3 seconds (defer first when the work
may take longer)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

import discord

from bots.discord import ids
from bots.discord.belongs import check_here
from bots.discord.boundary import interaction_boundary
from bots.discord.inbound import component_data

Handler = Callable[[discord.Interaction, ids.ActionId], Awaitable[None]]


class Actions:
    def __init__(self, handlers: Mapping[ids.Action, Handler]) -> None:
        self._handlers = dict(handlers)

    async def dispatch(self, interaction: discord.Interaction, custom_id: str) -> None:
        action = ids.decode(custom_id)
        handler = self._handlers.get(action.action) if action else None
        async with interaction_boundary(interaction, f"interaction {custom_id}"):
            if action is None or handler is None:  # a disabled label, or a retired button
                await interaction.response.defer()
                return
            await check_here(action, interaction.channel_id)
            await handler(interaction, action)

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        """Modal submissions of the bot, and clicks on a button the message no longer has (a
        second click racing the edit that removed it): discord.py routes neither. Clicks on
        buttons the message has come through their DynamicItems."""
        custom_id = component_data(interaction.data).custom_id
        if not custom_id.startswith("hermes:"):
            return
        if interaction.type is discord.InteractionType.modal_submit:
            await self.dispatch(interaction, custom_id)
        elif interaction.type is discord.InteractionType.component:
            if not _shown(interaction, custom_id):
                await self.dispatch(interaction, custom_id)


def _shown(interaction: discord.Interaction, custom_id: str) -> bool:
    """Whether the interaction's message still carries the component."""
    rows = interaction.message.components if interaction.message else []
    children = [child for row in rows for child in getattr(row, "children", [row])]
    return any(getattr(child, "custom_id", None) == custom_id for child in children)
