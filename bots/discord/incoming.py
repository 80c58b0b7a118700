"""A user's message becomes a run of the right session (DESIGN §6).

A mention in a text channel opens a thread on the message and binds it to a new session;
every later message in a bound thread continues it without a mention; a mention in another
thread binds that thread; a DM channel is one session until `/hermes new`. Gateway RESUME
replays are recognised by message id and never start a second run.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass

import discord

from bots.discord import places
from bots.discord.boundary import log_failure
from bots.discord.errors import CannotAnswerHere
from bots.discord.inbound import UserPost, user_post
from bots.discord.notices import Notices
from bots.discord.places import Place
from bots.discord.render import refusals
from bots.discord.render.parts import Part
from bots.discord.sessions import Found, SessionFinder
from core.attachments import DEFAULT_LIMITS, FileOffer, Limits
from core.conversation import turns, written
from core.conversation.dedupe import Seen
from core.conversation.refusals import EMPTY_MENTION
from core.errors import Busy
from core.runtime.pool import RunPool

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Incoming:
    message: discord.Message
    post: UserPost
    place: Place
    text: str
    mentioned: bool


class Conversations:
    def __init__(self, client: discord.Client, pool: RunPool, sessions: SessionFinder,
                 notices: Notices, allow_list: tuple[str, ...],
                 limits: Limits = DEFAULT_LIMITS) -> None:
        self._client = client
        self._pool = pool
        self._sessions = sessions
        self._notices = notices
        self._allow_list = allow_list
        self._limits = limits
        self._seen = Seen()

    async def on_message(self, message: discord.Message) -> None:
        incoming = await self._incoming(message)
        if incoming is None or not self._seen.first(message.id):
            return  # not for us, or a gateway replay of a message already handled
        try:
            found = await self._sessions.for_message(
                message, incoming.place, incoming.mentioned, incoming.text)
            if found is not None:
                incoming.place = found.place
                await self._turn(found, incoming)
        except Exception as error:
            log_failure(error, f"message {message.id}")
            await self._refuse(incoming, error)

    async def _incoming(self, message: discord.Message) -> Incoming | None:
        me, post = self._client.user, user_post(message)
        if post is None or me is None:
            return None
        place = await self._sessions.place_of(message.channel, message.guild)
        if place is None or not places.allowed(place, self._allow_list):
            return None
        text = places.prompt_text(post.content, me.id)
        return Incoming(message, post, place, text, me.id in post.mentions)

    async def _turn(self, found: Found, incoming: Incoming) -> None:
        message = incoming.message
        if not incoming.text and not incoming.post.has_media:
            self._reply(incoming, refusals.notice_part(EMPTY_MENTION))
            return
        said = await written.read(incoming.text, file_offers(message), self._limits)
        if said.notices:  # the files skipped, or that nothing in it could be read
            self._reply(incoming, refusals.notice_part("\n\n".join(said.notices)))
        if not said.text:
            return
        try:  # a message handled before (another process, before a restart) starts nothing
            await turns.write(self._pool, found.session.id, said.text,
                              author=str(incoming.post.author_id),
                              platform_message_id=str(message.id), files=said.files)
        except Busy as error:
            log_failure(error, f"message {message.id}")
            running = await turns.run_in_flight(found.session.id)
            self._reply(incoming, refusals.refusal_part(error, running))

    async def _refuse(self, incoming: Incoming, error: Exception) -> None:
        if isinstance(error, CannotAnswerHere) and not error.can_send:
            try:  # the channel is closed to us: tell the author in private
                dm = await incoming.message.author.create_dm()
            except discord.HTTPException:
                log.warning("cannot tell %s why: DMs closed too", incoming.message.author.id)
                return
            self._notices.post(dm.id, refusals.refusal_part(error), key=incoming.message.id)
            return
        self._reply(incoming, refusals.refusal_part(error))

    def _reply(self, incoming: Incoming, part: Part) -> None:
        target = incoming.place.target
        reply_to = incoming.message.id if incoming.message.channel.id == target else None
        self._notices.post(target, part, key=incoming.message.id, reply_to=reply_to)


def file_offers(message: discord.Message) -> list[FileOffer]:
    """The message's attachments, each read from Discord's CDN through discord.py (its size,
    as Discord states it, is checked before any byte is read)."""
    return [FileOffer(a.filename, a.content_type, a.size, functools.partial(_read, a))
            for a in message.attachments]


async def _read(attachment: discord.Attachment, limit: int) -> bytes:
    return (await attachment.read())[:limit]
