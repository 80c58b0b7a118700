"""A clarify question: one button per choice and "Custom answer…"; then who answered what."""

from __future__ import annotations

import discord

from bots.discord import ids
from bots.discord.render.parts import (
    BUTTON_LABEL,
    ROW_WIDTH,
    ROWS,
    ButtonSpec,
    Part,
    clip,
)
from core.conversation.refusals import question_closed
from core.conversation.vocabulary import PauseStatus, PauseView

MAX_CHOICES = ROW_WIDTH * ROWS - 1  # the last slot is "Custom answer…"
QUESTION_CHARS = 3500
ANSWER_CHARS = 300


def clarify_part(pause: PauseView, run_finished: bool = False) -> Part:
    """The question with its buttons while open; the outcome without buttons once closed."""
    question = clip(pause.question, QUESTION_CHARS)
    embed = discord.Embed(title="❓ Hermes asks", description=question)
    if pause.status == PauseStatus.ANSWERED:
        embed.colour = discord.Colour.green()
        embed.description = f"{question}\n\n✅ answered by {answer_of(pause)}"
        return Part(embed)
    if pause.status == PauseStatus.EXPIRED or run_finished:
        embed.colour = discord.Colour.dark_grey()
        embed.description = f"{question}\n\n⌛ This question is closed: it was not answered in time."
        return Part(embed)
    embed.colour = discord.Colour.gold()
    return Part(embed, choice_buttons(pause))


def choice_buttons(pause: PauseView) -> tuple[ButtonSpec, ...]:
    choices = pause.choices[:MAX_CHOICES]
    buttons = [
        ButtonSpec(clip(choice, BUTTON_LABEL), ids.encode(ids.Action.CHOICE, pause.pause_id, index),
                   "primary")
        for index, choice in enumerate(choices)
    ]
    custom = ButtonSpec("Custom answer…", ids.encode(ids.Action.CUSTOM, pause.pause_id), emoji="✏️")
    return (*buttons, custom)


def who(user: str | None) -> str:
    """A Discord user id as a mention; anything else (an operator's name) as it is."""
    if user and user.isdigit():
        return f"<@{user}>"
    return user or "someone"


def answer_of(pause: PauseView) -> str:
    """"<@42>: blue"."""
    return f"{who(pause.answered_by)}: {clip(pause.answer or '', ANSWER_CHARS)}"


def refusal(pause: PauseView) -> str:
    """Why an answer to this pause is not taken (said only to the person who tried)."""
    return question_closed(pause, answer_of(pause))
