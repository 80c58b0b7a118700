"""A person's message or edit becomes a turn of the right session (core.conversation.turns).

Where a conversation lives (`Place`): a DM channel, or a thread of a guild channel. A mention
in a text channel opens a thread on the message and binds it to a new session; every later
message in a bound thread continues it without a mention; a mention in another thread binds
that thread, and a forum's posts are threads too (a post's starter message has the post's
id and is in the post); a DM channel is one session until `/hermes new`. Where the person's
message is (the channel a thread was opened in, or the thread) is noted before its turn is
written, for the reactions on it (bots/discord/delivery/reactions.py). Gateway RESUME replays are
recognised by message id and never start a second run. Before anything is bound or run,
the message passes the intake (bots/discord/intake.py: who may talk), and once its place is
known (the thread opened on it, if any) the bot types there: the turn's first sign
(bots/discord/delivery/first_sign.py), before any database work of it.

Editing one's own message makes a new branch that the bot answers in the thread:
`on_message_edit` covers messages in discord.py's cache, `on_raw_message_edit` the others
(older ones, or sent before a restart); only a changed text of a message the bot took as a
turn counts (link previews also arrive as edits).
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Final

import discord

from bots.discord.boundary import log_failure
from bots.discord.delivery.first_sign import FirstSign
from bots.discord.delivery.live import Notices
from bots.discord.errors import CannotAnswerHere
from bots.discord.files import DiscordFiles
from bots.discord.inbound import UserPost, user_post
from bots.discord.intake import DiscordIntake, role_ids
from bots.discord.refs import DiscordRefs
from bots.discord.render import refusals
from bots.discord.render.parts import Part
from bots.discord.render.refusals import missing_permissions, missing_permissions_text
from bots.discord.render.titles import thread_name
from bots.discord.thread_history import DiscordThreadHistory
from core.conversation import bindings, turns
from core.conversation.refusals import EDIT_BUSY, EMPTY_MENTION, STEERED
from core.conversation.vocabulary import (
    DEFAULT_MESSAGES,
    ChatMessage,
    ChatSession,
    FileReader,
    Platform,
    RunPool,
    ThreadKey,
)
from core.edge.dedupe import Seen
from core.errors import Busy

log = logging.getLogger(__name__)

# --- where a conversation lives ------------------------------------------------------------

DM_WORKSPACE = "dm"


@dataclass(frozen=True, slots=True)
class Place:
    """A DM (guild None), a guild text or forum channel (thread ""), or a thread of one (a
    forum's post)."""

    guild: int | None
    channel: int
    thread: int | None = None

    @property
    def is_dm(self) -> bool:
        return self.guild is None

    @property
    def target(self) -> int:
        """The channel the bot writes to: the thread if there is one."""
        return self.thread or self.channel

    def key(self) -> ThreadKey:
        workspace = DM_WORKSPACE if self.guild is None else str(self.guild)
        return ThreadKey(Platform.DISCORD, workspace, str(self.channel), str(self.thread or ""))

    def with_thread(self, thread: int) -> Place:
        return Place(self.guild, self.channel, thread)


def place_of(channel: object, guild_id: int | None) -> Place | None:
    """The place of a channel discord.py gave us; None for kinds the bot does not talk in."""
    if isinstance(channel, discord.Thread):
        return Place(guild_id or channel.guild.id, channel.parent_id, channel.id)
    if isinstance(channel, discord.DMChannel):
        return Place(None, channel.id)
    if isinstance(channel, discord.TextChannel | discord.ForumChannel):  # a forum: its posts are threads
        return Place(guild_id or channel.guild.id, channel.id)
    return None


def allowed(place: Place, channels: Collection[str]) -> bool:
    """DISCORD_CHANNELS: unset allows everything; else listed channels (and their threads),
    and DMs only when the list holds "dm"."""
    if not channels:
        return True
    if place.is_dm:
        return DM_WORKSPACE in channels
    return str(place.channel) in channels or str(place.target) in channels


def prompt_text(content: str, bot_id: int) -> str:
    """The message without the bot's mention(s)."""
    return re.sub(rf"<@!?{bot_id}>", " ", content).strip()


# --- the session of a place ---------------------------------------------------------------

NEEDED_TO_OPEN = ("view_channel", "create_public_threads", "send_messages_in_threads",
                  "embed_links", "read_message_history")
THREAD_ALREADY_CREATED = 160004
ARCHIVE_AFTER_MINUTES: Final = 1440


@dataclass(frozen=True, slots=True)
class Found:
    session: ChatSession
    place: Place  # with the thread the bot opened, if it opened one
    new: bool = False  # the session was made for this message (the thread had none)


class SessionFinder:
    def __init__(self, client: discord.Client, targets: DiscordRefs) -> None:
        self._client = client
        self._targets = targets

    async def place_of(self, channel: object, guild: discord.Guild | None) -> Place | None:
        """The place of a channel; an uncached one is fetched first (to learn a thread's
        parent). None where the bot cannot see it (a guild it left, a thread closed to it)."""
        if isinstance(channel, discord.PartialMessageable):
            try:
                channel = await self._client.fetch_channel(channel.id)
            except (discord.NotFound, discord.Forbidden) as error:
                log.info("channel %s is out of the bot's reach: %s", channel.id, error.text)
                return None
        return place_of(channel, guild.id if guild else None)

    async def where(self, message: discord.Message, place: Place, mentioned: bool,
                    text: str) -> Place | None:
        """Where the message's conversation lives: its place, or the thread opened on it for a
        mention in a channel (None: nowhere, the message is not for the bot)."""
        if place.is_dm or place.thread is not None:
            return place
        if not mentioned:
            return None
        thread = await self._open_thread(message, text)
        return place.with_thread(thread.id) if thread else None

    async def found(self, place: Place, mentioned: bool, opened: bool = False) -> Found | None:
        """The session of the conversation at `place` (`where`): bound to it now on a mention
        or in a DM (`opened`: in the thread `where` opened, which has none yet); None for a
        thread that has none."""
        if place.is_dm or mentioned:
            return await self._bind(place, opened)
        session = await bindings.bound_session(place.key())
        return Found(session, place) if session else None

    def asking(self, message: discord.Message) -> None:
        """The message is about to become a turn: its reactions go where it is."""
        self._targets.asking(message.id, message.channel.id)

    async def _bind(self, place: Place, opened: bool = False) -> Found:
        session, new = await bindings.session_for_thread(place.key(), opened=opened)
        self._targets.bound(session.id, place.target)
        return Found(session, place, new)

    async def _open_thread(self, message: discord.Message, text: str) -> discord.Thread | None:
        """The thread opened on the message; None when the message was deleted meanwhile."""
        self._check_permissions(message)
        try:
            return await message.create_thread(
                name=thread_name(text), auto_archive_duration=ARCHIVE_AFTER_MINUTES)
        except discord.NotFound as error:
            log.info("message %s is gone, no thread opened on it: %s", message.id, error.text)
            return None
        except discord.Forbidden as error:
            text = f"🔒 I can't open a thread here: {error.text}"
            raise CannotAnswerHere(text, can_send=True) from error
        except discord.HTTPException as error:
            if error.code != THREAD_ALREADY_CREATED:
                raise
        thread = await self._client.fetch_channel(message.id)  # a thread opened on a message has its id
        assert isinstance(thread, discord.Thread)
        return thread

    @staticmethod
    def _check_permissions(message: discord.Message) -> None:
        me = message.guild.me if message.guild else None
        channel = message.channel
        if me is None or not isinstance(channel, discord.TextChannel):
            return
        granted = channel.permissions_for(me)
        missing = missing_permissions(granted, NEEDED_TO_OPEN)
        if missing:
            text = missing_permissions_text(channel.mention, missing)
            raise CannotAnswerHere(text, can_send=granted.send_messages and granted.view_channel)


# --- a message becomes a turn, an edit a branch ---------------------------------------------


@dataclass(slots=True)
class Incoming:
    message: discord.Message
    post: UserPost
    place: Place
    text: str
    mentioned: bool


@dataclass(frozen=True, slots=True)
class EditedTurn:
    place: Place
    node: ChatMessage


class DiscordConversation:
    """The gateway's messages and edits of people, as turns of their sessions."""

    def __init__(self, client: discord.Client, pool: RunPool, sessions: SessionFinder,
                 intake: DiscordIntake, notices: Notices, sign: FirstSign,
                 allow_list: tuple[str, ...], reader: FileReader,
                 context_messages: int = DEFAULT_MESSAGES,
                 files: DiscordFiles | None = None) -> None:
        self._client = client
        self._sign = sign  # the bot typing where the answer will come, first of all
        self._files = files or DiscordFiles()  # DISCORD_CDN_HOSTS
        self._pool = pool
        self._sessions = sessions
        self._intake = intake
        self._notices = notices
        self._allow_list = allow_list
        self.reader = reader  # the attachment limits, the workers that read files
        self._context_messages = context_messages  # THREAD_CONTEXT_MESSAGES
        self._history = DiscordThreadHistory(client)
        self._seen = Seen()
        self._edits_seen = Seen()

    async def on_message(self, message: discord.Message) -> None:
        incoming = await self._incoming(message)
        if incoming is None or not self._seen.first(message.id):
            return  # not for us, or a gateway replay of a message already handled
        try:
            if not await self._for_us(incoming) or not await self._intake.admits(
                    message, incoming.place.key(), incoming.place.target):
                return
            place = await self._sessions.where(message, incoming.place, incoming.mentioned,
                                               incoming.text)
            if place is None:
                return
            self._sign.give(place.target)  # before any of the turn is written (first_sign.py)
            found = await self._sessions.found(place, incoming.mentioned,
                                               opened=place.thread != incoming.place.thread)
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
        if place is None or not allowed(place, self._allow_list):
            return None
        text = prompt_text(post.content, me.id)
        return Incoming(message, post, place, text, me.id in post.mentions)

    @staticmethod
    async def _for_us(incoming: Incoming) -> bool:
        """A DM, a mention, or a message in a thread bound to a session."""
        place = incoming.place
        if place.is_dm or incoming.mentioned:
            return True
        return place.thread is not None and await bindings.bound_session(place.key()) is not None

    async def _turn(self, found: Found, incoming: Incoming) -> None:
        message = incoming.message
        if not incoming.text and not incoming.post.has_media:
            self._reply(incoming, refusals.notice_part(EMPTY_MENTION))
            return
        self._sessions.asking(message)
        taken = await turns.take(self._pool, self._arrival(found, incoming), self.reader,
                                 functools.partial(self._said_first, incoming),
                                 self._context_messages)
        if taken.busy is not None:
            log_failure(taken.busy, f"message {message.id}")
            self._reply(incoming, refusals.refusal_part(taken.busy, taken.running, taken.parked))
        elif taken.steered:
            self._reply(incoming, refusals.notice_part(STEERED))
        elif taken.not_allowed:
            await self._intake.refused(message, found.place.key(), found.place.target)

    def _arrival(self, found: Found, incoming: Incoming) -> turns.Arrival:
        """The message with what reads what people wrote before it: the thread's earlier
        messages on the first mention in a thread, and whatever a mention replies to (the whole
        chain on the first turn, the message replied to after it); nothing in a DM."""
        message = incoming.message
        thread = replied = None
        if not found.place.is_dm:
            thread = functools.partial(self._history.thread, message)
            if incoming.mentioned:
                replied = functools.partial(self._history.replied, message)
        return turns.Arrival(found.session, found.new, incoming.text,
                             str(incoming.post.author_id), str(message.id),
                             offers=self._files.offers(message), thread=thread, replied=replied,
                             place=found.place.key(), policy=self._intake.policy,
                             roles=tuple(role_ids(message.author)))

    async def _said_first(self, incoming: Incoming, notices: tuple[str, ...]) -> None:
        """The files skipped, or that nothing in the message could be read."""
        self._reply(incoming, refusals.notice_part("\n\n".join(notices)))

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

    async def on_message_edit(self, before: discord.Message, after: discord.Message) -> None:
        if getattr(before, "content", None) != getattr(after, "content", None):
            await self.edited(after)

    async def on_raw_message_edit(self, payload: discord.RawMessageUpdateEvent) -> None:
        if payload.cached_message is None:  # cached ones reach on_message_edit
            await self.edited(payload.message)

    async def edited(self, message: discord.Message) -> None:
        """Branch the conversation at the edited message; a refusal is said in the thread."""
        me, post = self._client.user, user_post(message)
        if me is None or post is None or not self._edits_seen.first((post.id, post.content)):
            return  # not a person's message, or a partial update (an embed arrived)
        turn = await self._turn_of(message)
        text = prompt_text(post.content, me.id)
        if turn is None or not text or not await self._intake.admits(
                message, turn.place.key(), turn.place.target):
            return  # not a turn of ours, or its author may no longer talk to the bot
        self._sessions.asking(message)
        try:  # an unchanged text (a link preview arrived) starts nothing
            taken = await turns.take_edit(self._pool, turn.node, text, author=str(post.author_id),
                                          platform_message_id=str(message.id))
        except Exception as error:
            self._refuse_edit(turn, post, error, await turns.run_in_flight(turn.node.session_id))
            return
        if taken.busy is not None:
            self._refuse_edit(turn, post, taken.busy, taken.running)

    def _refuse_edit(self, turn: EditedTurn, post: UserPost, error: Exception,
                     running: str | None) -> None:
        log_failure(error, f"edit of message {post.id}")
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

