"""Answering a clarify question: a choice button, or "Custom answer…" and its modal.

The first answer wins; anyone later is told, privately, who answered what. The pause id in
the custom id is all a click needs, so this works after a restart. A question whose run has
ended expires with it (core), so a click on it from a client that still shows the buttons is
told so, and opens no modal.
"""

from __future__ import annotations

import discord

from bots.discord import ids
from bots.discord.boundary import tell
from bots.discord.inbound import modal_submission
from bots.discord.modal import ANSWER_FIELD, answer_modal
from bots.discord.pauses import PausePresenter
from bots.discord.render.clarify import refusal
from core.errors import InvalidInput, NotFound
from core.models import ClarifyPause, PauseStatus
from core.runtime.clarify import view
from core.runtime.pool import RunPool


class ClarifyActions:
    def __init__(self, pool: RunPool, pauses: PausePresenter) -> None:
        self._pool = pool
        self._pauses = pauses

    async def choice(self, interaction: discord.Interaction, action: ids.ActionId) -> None:
        await interaction.response.defer()
        pause = await _pause(action.number(0))
        index = action.number(1)
        if not 0 <= index < len(pause.choices or []):
            raise InvalidInput("that choice is not one of this question's")
        await self._answer(interaction, pause, str(pause.choices[index]))

    async def custom(self, interaction: discord.Interaction, action: ids.ActionId) -> None:
        """Open the modal (it must be the first response, so nothing slow comes before it)."""
        pause = await _pause(action.number())
        if pause.status != PauseStatus.UNANSWERED:
            await tell(interaction, refusal(view(pause)))
            return
        await interaction.response.send_modal(answer_modal(pause.id, pause.question))

    async def submitted(self, interaction: discord.Interaction, action: ids.ActionId) -> None:
        alone = interaction.message is None  # no message to update: "thinking…" just for them
        await interaction.response.defer(ephemeral=alone, thinking=alone)
        answer = modal_submission(interaction.data).values.get(ANSWER_FIELD, "").strip()
        await self._answer(interaction, await _pause(action.number()), answer)

    async def _answer(self, interaction: discord.Interaction, pause: ClarifyPause, answer: str) -> None:
        outcome = await self._pool.answer(pause.clarify_id, answer, user=str(interaction.user.id),
                                          pause_id=pause.id)
        if interaction.channel_id is not None:  # also when the run is not driven by this process
            self._pauses.show(outcome.pause, False, interaction.channel_id)
        if not outcome.accepted:
            await tell(interaction, refusal(outcome.pause))


async def _pause(pause_id: int) -> ClarifyPause:
    pause = await ClarifyPause.get_or_none(id=pause_id)
    if pause is None:
        raise NotFound("this question no longer exists")
    return pause

