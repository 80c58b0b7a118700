"""Every refusal as a clear sentence: core's errors translated once, at the Discord edge."""

from __future__ import annotations

import discord

from bots.discord.errors import CannotAnswerHere
from bots.discord.render.live import stop_button
from bots.discord.render.parts import Part
from core.errors import BridgeUnavailable, Busy, HermesChatError

BRIDGE_DOWN = "🔌 The agent service is unreachable right now, so I can't do that. Try again in a minute."
UNEXPECTED = "💥 Something went wrong on my side (it was logged). Please try again."
BUSY = ("⏳ I'm still working on the previous message of this conversation. "
        "Wait for it to finish, or press Stop to end it.")
EDIT_BUSY = ("⏳ I'm still working on this conversation, so your edit was not answered. "
             "Edit the message again once I'm done, or press Stop first.")
NO_SESSION = ("There is no conversation here yet: mention me in a channel to start one "
              "(it gets its own thread), or write to me in a DM.")
NOT_HERE = "I don't answer in this channel."
TEXT_ONLY = "I can only read text for now: please write your question as a message."
EMPTY_MENTION = "Hi! Ask me something: mention me with your question, e.g. `@Hermes what is a monad?`"


def refusal_text(error: BaseException) -> str:
    """What the user reads when `error` stopped their request."""
    if isinstance(error, Busy):
        return BUSY
    if isinstance(error, BridgeUnavailable):
        return BRIDGE_DOWN
    if isinstance(error, CannotAnswerHere):
        return error.message
    if isinstance(error, HermesChatError):
        return f"⚠️ {error.message}"
    return UNEXPECTED


def refusal_part(error: BaseException, run_id: str | None = None) -> Part:
    """A refusal message for the thread; a busy session gets a Stop button for its run."""
    embed = discord.Embed(description=refusal_text(error), colour=discord.Colour.orange())
    if isinstance(error, Busy) and run_id:
        return Part(embed, (stop_button(run_id),))
    return Part(embed)


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
