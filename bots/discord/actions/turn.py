"""The actions on a turn's answer: Regenerate (and Retry), ◀ ▶ and Stop for the turn's asker
and the chat admins; 👍 / 👎 for everyone in the conversation."""

from __future__ import annotations

import discord

from bots.discord import ids
from bots.discord.actions import ID, RUN, ActionItem, OnMessage
from bots.discord.boundary import tell
from bots.discord.services import DiscordServices
from core.conversation import bindings, feedback, policy, turns, views
from core.conversation.refusals import FINISHED, SWITCH_BUSY
from core.conversation.vocabulary import Platform
from core.errors import Busy, Conflict, NotFound

# --- for the turn's asker and the chat admins ---------------------------------------------


class Regenerate(OnMessage, template=ids.pattern(ids.Action.REGENERATE, message=ID)):
    """Regenerate, and Retry on a failed turn: a new version, shown live in the same messages."""

    on_turn = True

    async def run(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        await interaction.response.defer()
        await turns.regenerate(services.pool, self.number("message"),
                               author=str(interaction.user.id))


class Version(OnMessage, template=ids.pattern(ids.Action.VERSION, message=ID)):
    """◀ ▶: show (and make active) another version of the answer."""

    on_turn = True

    async def run(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        await interaction.response.defer()
        try:
            message = await turns.switch_version(self.number("message"))
        except Busy:
            await tell(interaction, SWITCH_BUSY)
            return
        await services.follower.route(await views.stored_update(message.id))


class Stop(ActionItem, template=ids.pattern(ids.Action.STOP, run=RUN)):
    """Stop the run, whichever replica drives it."""

    on_turn = True

    async def session_of(self) -> int | None:
        return await bindings.session_of_run(self.args["run"])

    async def asker_of(self) -> str | None:
        return await policy.asker_of_run(self.args["run"])

    async def run(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        await interaction.response.defer()
        try:
            stopped = await turns.stop_shown(services.pool, self.args["run"])
        except (Conflict, NotFound):
            await tell(interaction, FINISHED)
            return
        if stopped.show_end:
            await services.follower.route(stopped.update)


# --- open to everyone in the conversation -------------------------------------------------


class Feedback(OnMessage, template=ids.pattern(ids.Action.FEEDBACK, message=ID, value=r"[a-z]+")):
    """👍 / 👎: the clicker's rating of the answer (one per person, changeable)."""

    async def run(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        thanks = await feedback.rate(self.number("message"), Platform.DISCORD,
                                     str(interaction.user.id), self.args["value"])
        await tell(interaction, thanks)


ITEMS: tuple[type[ActionItem], ...] = (Regenerate, Version, Stop, Feedback)
