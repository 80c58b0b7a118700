"""A clarify question's clicks: its choices, "Custom answer…" and the modal it opens (for the
turn's asker and the chat admins). The first answer wins; anyone later is told, privately,
who answered what."""

from __future__ import annotations

import discord

from bots.discord import ids
from bots.discord.actions import ID, NEVER, ActionItem, OnPause
from bots.discord.boundary import tell
from bots.discord.inbound import modal_submission
from bots.discord.render.clarify import refusal
from bots.discord.render.parts import clip
from bots.discord.services import DiscordServices
from core.conversation import questions
from core.conversation.vocabulary import PauseStatus, PauseView

ANSWER_FIELD = "answer"
ANSWER_CHARS = 4000


class OnQuestion(OnPause, template=NEVER):
    """An action on a clarify question: it reads the question and answers it."""

    async def pause(self) -> PauseView:
        return await questions.question(self.number("pause"))

    async def answer(self, interaction: discord.Interaction, services: DiscordServices,
                     pause: PauseView, answer: str) -> None:
        """The first answer wins; anyone later is told, privately, who answered what."""
        outcome = await services.pool.answer(pause.clarify_id, answer, user=str(interaction.user.id),
                                             pause_id=pause.pause_id)
        await self.settled(interaction, services, outcome, refusal(outcome.pause))


class Choice(OnQuestion, template=ids.pattern(ids.Action.CHOICE, pause=ID, index=ID)):
    """A choice button of a clarify question."""

    async def run(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        await interaction.response.defer()
        pause = await self.pause()
        await self.answer(interaction, services, pause, questions.choice(pause, self.number("index")))


class CustomAnswer(OnQuestion, template=ids.pattern(ids.Action.CUSTOM, pause=ID)):
    """"Custom answer…": open the modal (its first response, so nothing slow comes before).
    A question whose run has ended expired with it: no modal, the clicker is told."""

    async def run(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        pause = await self.pause()
        if pause.status != PauseStatus.UNANSWERED:
            await tell(interaction, refusal(pause))
            return
        await interaction.response.send_modal(answer_modal(pause.pause_id, pause.question))


class AnswerSubmitted(OnQuestion, template=ids.pattern(ids.Action.ANSWER, pause=ID)):
    """What was typed in the Custom answer modal (routed by `on_unrouted_interaction`)."""

    async def run(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        alone = interaction.message is None  # no message to update: "thinking…" just for them
        await interaction.response.defer(ephemeral=alone, thinking=alone)
        answer = modal_submission(interaction.data).values.get(ANSWER_FIELD, "").strip()
        await self.answer(interaction, services, await self.pause(), answer)


def answer_modal(pause_id: int, question: str) -> discord.ui.Modal:
    """A modal asking for a free answer, not kept in discord.py's store: its submission is
    routed by its custom id, so one opened before a restart still answers after it, and one
    the user closes leaves nothing behind."""
    modal = discord.ui.Modal(title="Answer Hermes", custom_id=ids.encode(ids.Action.ANSWER, pause_id),
                             timeout=None)
    text: discord.ui.TextInput[discord.ui.Modal] = discord.ui.TextInput(
        custom_id=ANSWER_FIELD, style=discord.TextStyle.paragraph, max_length=ANSWER_CHARS)
    modal.add_item(discord.ui.Label(text="Your answer", description=clip(question, 100), component=text))
    modal.stop()  # finished: send_modal will not store it
    return modal


ITEMS: tuple[type[ActionItem], ...] = (Choice, CustomAnswer)
MODALS: tuple[type[ActionItem], ...] = (AnswerSubmitted,)  # routed by on_unrouted_interaction
