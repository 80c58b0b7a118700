"""A thread's name: after the question when the bot opens it, then its conversation's title,
cleaned and bounded to Discord's 100 characters.

A thread the bot created (a mention's thread, `/hermes new`'s thread or forum post) is
renamable; a thread or forum post a person created keeps the name they gave it, and so does a
thread whose name already begins with the title (the bot named it after the question, whose
first words the automatic title is). The renames themselves: bots/discord/delivery/titles.py.
"""

from __future__ import annotations

import discord

from core.text.safe_text import shortened

THREAD_NAME = 100  # Discord's limit of a thread's name
NEW_THREAD_NAME = "Conversation with Hermes"


def thread_name(text: str) -> str:
    """A thread's name from a question or a title: one line of printable characters, at
    most 100 of them, cut after a whole word (an ellipsis marks a cut)."""
    line = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return shortened(line, THREAD_NAME) if line else NEW_THREAD_NAME


def renamable(channel: object, bot_id: int | None, title: str) -> bool:
    """Whether the bot renames this channel to `title`: a thread it created, not already
    named with the title's words."""
    if not isinstance(channel, discord.Thread) or bot_id is None or channel.owner_id != bot_id:
        return False
    name = thread_name(title)
    return channel.name != name and not channel.name.startswith(name.removesuffix("…"))
