"""A tool approval: the command in a code block, the tool and reason, a button per decision;
then who decided what, without buttons."""

from __future__ import annotations

from dataclasses import replace

import discord

from bots.discord import ids
from bots.discord.render.clarify import who
from bots.discord.render.parts import ButtonSpec, Part, Style, clip
from core.conversation.presenting import APPROVAL_LABELS, approval_outcome, approval_question
from core.conversation.vocabulary import PauseStatus, PauseView

COMMAND_CHARS = 3000  # the code block, well inside an embed's 4096 characters
HEAD_CHARS = 800  # the line naming the tool and the reason
STYLES: dict[str, Style] = {"once": "success", "session": "primary", "always": "secondary",
                            "deny": "danger"}
CLOSED = "⌛ Closed: the run ended before anybody decided, so it did not run"


def code_block(command: str) -> str:
    """`command` fenced so nothing in it can close the fence: each backtick followed by a
    zero-width space (it still reads as a backtick), then bounded (a cut leaves at most one
    backtick without its space, never three in a row)."""
    escaped = clip(command.replace("`", "`\u200b"), COMMAND_CHARS)
    return f"```\n{escaped}\n```"


def approval_part(pause: PauseView, run_finished: bool = False) -> Part:
    """The question with its buttons while it waits; the decision once made (or closed)."""
    text = f"{clip(approval_question(pause), HEAD_CHARS)}\n{code_block(pause.question)}"
    embed = discord.Embed(title="⚠️ Tool approval", description=text)
    outcome = approval_outcome(replace(pause, answered_by=who(pause.answered_by)))
    if outcome is None and run_finished:
        outcome = CLOSED
    if outcome is not None:
        denied = pause.status != PauseStatus.ANSWERED or pause.answer == "deny"
        embed.colour = discord.Colour.dark_grey() if denied else discord.Colour.green()
        embed.description = f"{text}\n{outcome}"
        return Part(embed)
    embed.colour = discord.Colour.orange()
    return Part(embed, decision_buttons(pause))


def decision_buttons(pause: PauseView) -> tuple[ButtonSpec, ...]:
    """Allow once, Allow in this conversation, Always allow (shown to all, taken from chat
    admins only), Deny: those the Bridge offers, in that order."""
    return tuple(
        ButtonSpec(label, ids.encode(ids.Action.DECIDE, pause.pause_id, decision), STYLES[decision])
        for decision, label in APPROVAL_LABELS.items() if decision in pause.choices)


def decided_refusal(pause: PauseView, reason: str | None) -> str:
    """Why a decision was not taken (said only to who clicked): who decided first, or why."""
    outcome = approval_outcome(replace(pause, answered_by=who(pause.answered_by)))
    return f"Nothing was changed: {outcome or reason or 'this approval is closed'}"
