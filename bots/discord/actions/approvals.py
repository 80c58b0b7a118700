"""A tool approval's buttons: who may decide is the runtime's rule (`pool.decide` with the
policy); the click is refused privately before anything changes."""

from __future__ import annotations

import discord

from bots.discord import ids
from bots.discord.actions import ID, ActionItem, OnPause
from bots.discord.render.approval import decided_refusal
from bots.discord.services import DiscordServices


class Decide(OnPause, template=ids.pattern(ids.Action.DECIDE, pause=ID, decision=r"[a-z]{1,10}")):
    """A tool approval's button: Allow once, Allow in this conversation, Always allow, Deny.
    Only the asker or a chat admin decides, whatever CONVERSATION_ACTIONS says, and "Always
    allow" is a chat admin's only: anyone else is refused privately before anything changes."""

    async def _check(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        await super()._check(interaction, services)
        services.intake.policy.check_approve(str(interaction.user.id), await self.asker_of(),
                                             self.args["decision"])

    async def run(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        await interaction.response.defer()
        outcome = await services.pool.decide(None, self.args["decision"], str(interaction.user.id),
                                             services.intake.policy, pause_id=self.number("pause"))
        await self.settled(interaction, services, outcome,
                           decided_refusal(outcome.pause, outcome.reason))


ITEMS: tuple[type[ActionItem], ...] = (Decide,)
