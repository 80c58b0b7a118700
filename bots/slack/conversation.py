"""A person writing in a conversation: the Events API listeners (mentions, messages in DMs
and bound threads, edits), the gate of who may talk to the bot, and `SlackConversations`,
which turns a message into a run of its thread's session and an edit into a branch
(`core.conversation.turns` decides; this says it in the thread).

Each listener acknowledges at once (bolt acks events for us) and does the work in a tracked
task of its thread's queue.
"""

from __future__ import annotations

import functools
import logging

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext

from core.conversation import bindings, policy, turns, written
from core.conversation.refusals import BUSY, EDIT_BUSY, INTERRUPTED, NOT_ALLOWED, STEERED
from core.conversation.vocabulary import ChatSession, FileReader
from core.conversation.refusals import log_refusal, refusal_text
from core.errors import Busy, HermesChatError

from .files import SlackFiles
from .commands import PRIVATE, Command, Commands, Where, mention_command
from .delivery.first_sign import FirstSigns, Sign
from .inbound import (
    MessageEdit,
    MessageEvent,
    SlackIncoming,
    SlackPlace,
    edited,
    incoming,
)
from .intake import RECOVERED, in_thread, inbound_of, intake_of, typed, unheard
from .refs import Slot
from .render.blocks import Payload, section
from .render.busy import busy_notice
from .services import SlackServices
from .thread_history import SlackThreadHistory

log = logging.getLogger(__name__)


class SlackConversations:
    """Retries and double deliveries start nothing twice: the Slack ts of every user message
    is stored on its node, so one that is already there (or arrives while it is being stored)
    is ignored, on any replica."""

    def __init__(self, services: SlackServices, commands: Commands, files: SlackFiles,
                 reader: FileReader, history: SlackThreadHistory, context_messages: int) -> None:
        self._services = services
        self._commands = commands
        self._files = files
        self._reader = reader
        self._history = history
        self._context_messages = context_messages  # THREAD_CONTEXT_MESSAGES
        self._signs = FirstSigns(services.sender, services.features, services.statuses)

    def register(self, app: AsyncApp) -> None:
        app.event("app_mention")(self.on_mention)
        app.event("message")(self.on_message)

    async def on_mention(self, context: AsyncBoltContext) -> None:
        message = incoming(typed(context, MessageEvent), context.bot_user_id)
        if self._services.seen.first(message.key):
            self._handle(message, create=True, commands=True, bot=context.bot_user_id,
                         context=context)
        await _unless_handed(context)

    async def on_message(self, context: AsyncBoltContext) -> None:
        bot = context.bot_user_id
        event = inbound_of(context)
        if isinstance(event, MessageEdit):
            return self._edit(edited(event, bot), event.edit_ts)
        if isinstance(event, MessageEvent):
            message = incoming(event, bot)
            mention = not message.place.is_dm and f"<@{bot}>" in event.text  # app_mention's
            chatter = not message.place.is_dm and not event.thread_ts  # outside any thread
            if not (mention or chatter) and self._services.seen.first(message.key):
                self._handle(message, create=message.place.is_dm, commands=message.place.is_dm,
                             bot=bot, context=context)
        await _unless_handed(context)
        return None

    def _handle(self, message: SlackIncoming, create: bool, commands: bool,
                bot: str | None, context: AsyncBoltContext) -> None:
        """A mention or DM may be a command ("@hermes status"); the rest goes to the agent
        (files shared without a word too: they are the message). Its event is done when the
        work ends (intake.py: a replica that dies first leaves it to be handled again)."""
        if not self._may_talk(message):
            return
        command = _command_in(message.text) if commands and not message.files else None
        recovered = bool(context.get(RECOVERED))
        if command is not None and recovered:  # it may have run: a reset twice loses words
            work = self._say(message.place, _text(INTERRUPTED.format(command=command.name)))
        elif command is not None:
            work = self._command(command, message.place, message.user)
        else:
            work = self.message(message, create, bot, recovered=recovered)
        reply = in_thread(self._services.sender, message.place)
        self._services.background.spawn(work, reply, f"message {message.ts}", queue=message.place.key,
                                        intake=intake_of(context))

    async def _command(self, command: Command, place: SlackPlace, user: str) -> None:
        if command.name in PRIVATE:
            return await self._private(command, place, user)
        try:
            payload = await self._commands.run(command, Where(place.team, place.channel, user, place))
        except Busy:
            session = await bindings.bound_session(place.key)
            if session is None:
                raise
            await self.refuse_busy(place, await turns.run_in_flight(session.id))  # with Stop
            return
        await self._services.sender.post(place.team, place.channel, place.reply_thread, payload)
        return None

    async def _private(self, command: Command, place: SlackPlace, user: str) -> None:
        """A command said only to who gave it (an ephemeral), its refusal too."""
        try:
            payload = await self._commands.run(command, Where(place.team, place.channel, user, place))
        except HermesChatError as error:
            log_refusal(log, error, f"/hermes {command.name}")
            payload = Payload(text := refusal_text(error), [section(text)])
        await self._services.sender.ephemeral(place.team, place.channel, user, payload.text,
                                              place.reply_thread, payload.blocks or None)

    def _edit(self, message: SlackIncoming | None, edit_ts: str) -> None:
        if message is None or not self._services.seen.first(("edit", *message.key, edit_ts)):
            return
        if not self._may_talk(message):
            return
        reply = in_thread(self._services.sender, message.place)
        self._services.background.spawn(self.edit(message), reply, f"edit {message.ts}",
                                        queue=message.place.key)

    def _may_talk(self, message: SlackIncoming) -> bool:
        """Whether the author may talk to the bot (ALLOWED_USERS). One who may not is told
        so privately, once per conversation, and nothing runs."""
        services, place, user = self._services, message.place, message.user
        if services.policy.may_talk(user):
            return True
        if services.told_not_allowed.first((place.key, user)):  # the cheap check, this replica
            services.background.spawn(self._not_allowed(place, user), unheard,
                                      f"not allowed {message.ts}", queue=place.key)
        return False

    async def _not_allowed(self, place: SlackPlace, user: str) -> None:
        """Tell `user` they may not talk to the bot, unless a replica told them in this
        conversation already (`policy.first_refusal`: recorded in the database, so neither a
        restart nor another replica tells them again)."""
        if await policy.first_refusal(place.key, user):
            await self._services.sender.ephemeral(place.team, place.channel, user, NOT_ALLOWED,
                                                  place.reply_thread)

    # --- what a message and an edit do ---

    async def message(self, incoming: SlackIncoming, create: bool,
                      bot_user_id: str | None = None, recovered: bool = False) -> None:
        """Start the run that answers `incoming` (creating the session when asked); the
        first mention in a thread takes the thread's earlier messages as context. Its first
        sign (delivery/first_sign.py) comes before any of it is written: for a mention or a
        DM before its session is looked for, in a thread once the thread is known to be ours.
        `recovered`: handled again, its replica having died or stopped before it was done:
        the turn may be written already (nothing to do), or its first sign posted (taken)."""
        place, run_id = incoming.place, turns.new_run_id()
        sign: Sign | None = None
        if recovered:
            if await self._taken_already(incoming):
                return
            if (earlier := await self._signs.earlier(place, incoming.ts)) is not None:
                sign, run_id = earlier
        if create and sign is None:
            sign = await self._signs.give(place, incoming.ts, run_id)
        try:
            session, new = await self._session(place, create, opened=place.opened_by(incoming.ts))
        except Exception:
            await self._signs.withdraw(place, sign or Sign(), replied=True)  # the boundary tells
            raise
        if session is None:
            return
        sign = sign or await self._signs.give(place, incoming.ts, run_id)
        arrival = turns.Arrival(
            session, new, incoming.text, incoming.user, incoming.ts,
            offers=self._files.offers(incoming.files),
            thread=self._thread_reader(incoming, bot_user_id),
            platform_refs=self._signs.slot(place, sign).to_refs(), run_id=run_id,
            place=place.key, policy=self._services.policy)
        await self._take(place, arrival, sign)

    @staticmethod
    async def _taken_already(incoming: SlackIncoming) -> bool:
        session = await bindings.bound_session(incoming.place.key)
        return session is not None and await turns.user_node(session.id, incoming.ts) is not None

    async def _take(self, place: SlackPlace, arrival: turns.Arrival, sign: Sign) -> None:
        """The turn written and started; its sign withdrawn if it starts no run."""
        told: list[str] = []

        async def say(notices: tuple[str, ...]) -> None:
            told.extend(notices)
            await self._notices(place, notices)

        try:
            taken = await turns.take(self._services.pool, arrival, self._reader, say,
                                     self._context_messages)
        except Exception:
            await self._signs.withdraw(place, sign, replied=True)  # the boundary tells why
            raise
        if taken.run is None:
            await self._signs.withdraw(place, sign, replied=bool(told) or taken.busy is not None
                                       or taken.steered)
        if taken.busy is not None:
            await self.refuse_busy(place, taken.running, parked=taken.parked)
        elif taken.steered:
            await self._say(place, Payload(STEERED, [section(STEERED)]))
        elif taken.not_allowed:
            await self._not_allowed(place, arrival.author)

    async def edit(self, incoming: SlackIncoming) -> None:
        """A user edited a message the bot answered: answer the new text in a new branch."""
        session = await bindings.bound_session(incoming.place.key)
        node = await turns.user_node(session.id, incoming.ts) if session else None
        if session is None or node is None:
            return
        slot = Slot(incoming.place.team, incoming.place.channel, incoming.place.reply_thread,
                    branched=True)
        taken = await turns.take_edit(self._services.pool, node, incoming.text,
                                      author=incoming.user, platform_message_id=incoming.ts,
                                      platform_refs=slot.to_refs())
        if taken.busy is not None:
            await self.refuse_busy(incoming.place, taken.running, EDIT_BUSY)

    async def refuse_busy(self, place: SlackPlace, running: str | None, text: str = BUSY,
                          parked: int | None = None) -> None:
        """Say the conversation is busy, with a Stop button for the run in the way (whichever
        replica drives it: Stop works from anywhere), and the choices for a message kept
        (`parked`: queue it, or give it to that run as guidance)."""
        await self._say(place, busy_notice(text, running, parked))

    async def _notices(self, place: SlackPlace, notices: tuple[str, ...]) -> None:
        for notice in notices:
            await self._say(place, _text(notice))

    async def _say(self, place: SlackPlace, payload: Payload) -> None:
        await self._services.sender.post(place.team, place.channel, place.reply_thread, payload)

    async def _session(self, place: SlackPlace, create: bool,
                       opened: bool) -> tuple[ChatSession | None, bool]:
        """The thread's session, and whether it was made for this message (`opened`: the
        message opened the thread)."""
        if not create:
            return await bindings.bound_session(place.key), False
        return await bindings.session_for_thread(place.key, opened=opened)

    def _thread_reader(self, incoming: SlackIncoming,
                       bot_user_id: str | None) -> written.Reader | None:
        """What reads the thread before `incoming`: none in a DM, or for the message that
        starts a thread."""
        place = incoming.place
        if place.is_dm or place.reply_thread in (None, incoming.ts):
            return None
        return functools.partial(self._history.before, place.team, place.channel,
                                 place.reply_thread, incoming.ts, bot_user_id=bot_user_id)


def _text(words: str) -> Payload:
    return Payload(words, [section(words)])


async def _unless_handed(context: AsyncBoltContext) -> None:
    """A message's event whose listener started no work is done (intake.py)."""
    if (intake := intake_of(context)) is not None:
        await intake.unless_handed()


def _command_in(text: str) -> Command | None:
    return mention_command(text) if text else Command("help")
