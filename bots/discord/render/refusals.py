"""Every refusal as a Discord message: the words are core's (`core.conversation.refusals`)."""

from __future__ import annotations

import discord

from bots.discord.errors import CannotAnswerHere
from bots.discord.render.live import stop_button
from bots.discord import ids
from bots.discord.render.parts import ButtonSpec, Part
from core.conversation.refusals import BUSY_CHOICES, QUEUE_IT, STEER_WITH_IT, not_yours
from core.conversation.refusals import refusal_text as core_refusal_text
from core.errors import Busy, NotYours


def refusal_text(error: BaseException) -> str:
    """What the user reads when `error` stopped their request (core's one vocabulary, plus
    the permissions only Discord has)."""
    if isinstance(error, CannotAnswerHere):
        return error.message
    if isinstance(error, NotYours):
        return not_yours(error.asker, mention=f"<@{error.asker}>" if error.asker else None)
    return core_refusal_text(error)


def refusal_part(error: BaseException, run_id: str | None = None,
                 parked: int | None = None) -> Part:
    """A refusal message for the thread; a busy session gets a Stop button for its run, and
    a message kept for its author (`parked`) the choices: queue it, or steer with it."""
    text = BUSY_CHOICES if parked is not None else refusal_text(error)
    embed = discord.Embed(description=text, colour=discord.Colour.orange())
    if not isinstance(error, Busy) or not run_id:
        return Part(embed)
    choices = () if parked is None else (
        ButtonSpec(QUEUE_IT, ids.encode(ids.Action.BUSY, parked, "queue"), "primary"),
        ButtonSpec(STEER_WITH_IT, ids.encode(ids.Action.BUSY, parked, "steer")))
    return Part(embed, (stop_button(run_id), *choices))


def notice_part(text: str) -> Part:
    return Part(discord.Embed(description=text, colour=discord.Colour.blurple()))


PERMISSION_NAMES = {
    "view_channel": "View Channels",
    "send_messages": "Send Messages",
    "send_messages_in_threads": "Send Messages in Threads",
    "create_public_threads": "Create Public Threads",
    "read_message_history": "Read Message History",
    "embed_links": "Embed Links",
    "attach_files": "Attach Files",
}


def missing_permissions(granted: discord.Permissions, needed: tuple[str, ...]) -> list[str]:
    """The names (as Discord's settings show them) of needed permissions not granted."""
    return [PERMISSION_NAMES[name] for name in needed if not getattr(granted, name)]


def missing_permissions_text(channel_mention: str, missing: list[str]) -> str:
    names = ", ".join(f"**{name}**" for name in missing)
    plural = "s" if len(missing) > 1 else ""
    return (f"🔒 I can't answer in {channel_mention}: I'm missing the {names} permission{plural} "
            "there. A server admin can grant it in the channel settings.")
