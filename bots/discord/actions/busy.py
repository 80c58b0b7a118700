"""A busy notice's choices: the author of a message refused while the thread's answer was
being written (or a chat admin) queues it after all, or gives it to that answer as guidance
(`core.conversation.turns.choose`); the notice then says what became of it, or, when the
guidance met a run not yet started, is a new notice with the choices again."""

from __future__ import annotations

import discord

from bots.discord import ids
from bots.discord.actions import ID, ActionItem
from bots.discord.delivery.components import view_of
from bots.discord.render.refusals import notice_part, refusal_part
from bots.discord.services import DiscordServices
from core.conversation import turns
from core.conversation.refusals import STEERED, chosen


class BusyChoice(ActionItem, template=ids.pattern(ids.Action.BUSY, parked=ID,
                                                  choice=r"queue|steer")):
    """Queue it / Steer with it, on the notice of the kept message `parked`."""

    async def session_of(self) -> int | None:
        return await turns.parked_session(self.number("parked"))

    async def run(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        await interaction.response.defer()
        choice = self.args["choice"]
        taken = await turns.choose(services.pool, self.number("parked"), choice,
                                   str(interaction.user.id), services.intake.policy,
                                   services.conversation.reader)
        part = notice_part(chosen(choice, interaction.user.mention)) if taken.busy is None \
            else refusal_part(taken.busy, taken.running, taken.parked)
        await interaction.edit_original_response(embed=part.embed, view=view_of(part))
        if taken.steered:
            await interaction.followup.send(embed=notice_part(STEERED).embed)


ITEMS: tuple[type[ActionItem], ...] = (BusyChoice,)
