"""Editing one's own message makes a new branch that the bot answers in the thread.

`on_message_edit` covers messages in discord.py's cache, `on_raw_message_edit` the others
(older ones, or sent before a restart); only a changed text of a message the bot took as a
turn counts (link previews also arrive as edits).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import discord

from bots.discord import places
from bots.discord.boundary import log_failure
from bots.discord.bounded import Seen
from bots.discord.inbound import user_post
from bots.discord.notices import Notices
from bots.discord.places import Place
from bots.discord.render import refusals
from bots.discord.running import running_in
from bots.discord.sessions import SessionFinder
from core.errors import Busy
from core.models import ChatMessage, Role
from core.runtime.pool import RunPool

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class EditedTurn:
    place: Place
    node: ChatMessage


class Edits:
    def __init__(self, client: discord.Client, pool: RunPool, sessions: SessionFinder,
                 notices: Notices) -> None:
        self._client = client
        self._pool = pool
        self._sessions = sessions
        self._notices = notices
        self._seen = Seen()

    async def on_message_edit(self, before: discord.Message, after: discord.Message) -> None:
        if getattr(before, "content", None) != getattr(after, "content", None):
            await self.edited(after)

    async def on_raw_message_edit(self, payload: discord.RawMessageUpdateEvent) -> None:
        if payload.cached_message is None:  # cached ones reach on_message_edit
            await self.edited(payload.message)

    async def edited(self, message: discord.Message) -> None:
        """Branch the conversation at the edited message; a refusal is said in the thread."""
        me, post = self._client.user, user_post(message)
        if me is None or post is None or not self._seen.claim((post.id, post.content)):
            return  # not a person's message, or a partial update (an embed arrived)
        turn = await self._turn_of(message)
        text = places.prompt_text(post.content, me.id)
        if turn is None or not text or text == turn.node.content:
            return  # not a turn of ours, or its text did not change (a link preview arrived)
        try:
            await self._pool.edit(turn.node.id, text, author=str(post.author_id),
                                  platform_message_id=str(message.id))
        except Exception as error:
            log_failure(error, f"edit of message {message.id}")
            part = refusals.refusal_part(error, running_in(self._pool, turn.node.session_id))
            if isinstance(error, Busy):
                part.embed.description = refusals.EDIT_BUSY
            self._notices.post(turn.place.target, part, key=("edit", post.id, post.content))

    async def _turn_of(self, message: discord.Message) -> EditedTurn | None:
        """The user node the message was taken as (its latest version), and where it lives."""
        place = await self._sessions.place_of(message.channel, message.guild)
        if place is not None and place.thread is None and not place.is_dm:
            place = place.with_thread(message.id)  # the message a thread was opened on
        session = await self._sessions.bound(place) if place else None
        if place is None or session is None:
            return None
        node = await ChatMessage.filter(
            session_id=session.id, platform_message_id=str(message.id), role=Role.USER,
        ).order_by("-id").first()
        return EditedTurn(place, node) if node else None
