"""The "Custom answer…" modal, and reading what a user submitted in it.

Submissions are routed by the modal's custom id (which carries the pause id) in
`on_interaction`, not by discord.py's in-memory modal store (what was typed is read by
`inbound.modal_submission`): so a modal opened before a
restart still answers after it, and a modal the user closes leaves nothing behind.
"""

from __future__ import annotations

import discord

from bots.discord import ids
from bots.discord.render.parts import clip

ANSWER_FIELD = "answer"
ANSWER_CHARS = 4000


def answer_modal(pause_id: int, question: str) -> discord.ui.Modal:
    """A modal asking for a free answer to the question; not kept in discord.py's store."""
    modal = discord.ui.Modal(title="Answer Hermes", custom_id=ids.encode(ids.Action.ANSWER, pause_id),
                             timeout=None)
    text = discord.ui.TextInput(custom_id=ANSWER_FIELD, style=discord.TextStyle.paragraph,
                                max_length=ANSWER_CHARS)
    modal.add_item(discord.ui.Label(text="Your answer", description=clip(question, 100), component=text))
    modal.stop()  # finished: send_modal will not store it (see the module docstring)
    return modal

