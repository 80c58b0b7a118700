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
from bots.discord.inbound import user_post
from bots.discord.notices import Notices
from bots.discord.places import Place
from bots.discord.render import refusals
from bots.discord.sessions import SessionFinder
from core.conversation import bindings, turns
from core.conversation.dedupe import Seen
from core.conversation.refusals import EDIT_BUSY
from core.errors import Busy
from core.models import ChatMessage
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
        if me is None or post is None or not self._seen.first((post.id, post.content)):
            return  # not a person's message, or a partial update (an embed arrived)
        turn = await self._turn_of(message)
        text = places.prompt_text(post.content, me.id)
        if turn is None or not text:
            return  # not a turn of ours
        try:  # an unchanged text (a link preview arrived) starts nothing
            await turns.edit(self._pool, turn.node, text, author=str(post.author_id),
                             platform_message_id=str(message.id))
        except Exception as error:
            log_failure(error, f"edit of message {message.id}")
            running = await turns.run_in_flight(turn.node.session_id)
            part = refusals.refusal_part(error, running)
            if isinstance(error, Busy):
                part.embed.description = EDIT_BUSY
            self._notices.post(turn.place.target, part, key=("edit", post.id, post.content))

    async def _turn_of(self, message: discord.Message) -> EditedTurn | None:
        """The user node the message was taken as (its latest version), and where it lives."""
        place = await self._sessions.place_of(message.channel, message.guild)
        if place is not None and place.thread is None and not place.is_dm:
            place = place.with_thread(message.id)  # the message a thread was opened on
        session = await bindings.bound_session(place.key()) if place else None
        if place is None or session is None:
            return None
        node = await turns.user_node(session.id, str(message.id))
        return EditedTurn(place, node) if node else None
