"""Events API listeners: mentions, messages in DMs and bound threads, edits.

Each acknowledges at once (bolt acks events for us) and does the work in a tracked task.
"""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext

from core.conversation import bindings
from core.conversation.refusals import NOT_ALLOWED
from core.errors import Busy

from .command_words import Command, mention_command
from .commands import Commands, Where
from .conversation import Conversations
from .inbound import Incoming, MessageEdit, MessageEvent, edited, incoming
from .intake import inbound_of, typed
from .places import Place
from .replies import in_thread, unheard
from .services import Services


class EventListeners:
    def __init__(self, services: Services, conversations: Conversations, commands: Commands) -> None:
        self._services = services
        self._conversations = conversations
        self._commands = commands

    def register(self, app: AsyncApp) -> None:
        app.event("app_mention")(self.on_mention)
        app.event("message")(self.on_message)

    async def on_mention(self, context: AsyncBoltContext) -> None:
        message = incoming(typed(context, MessageEvent), context.bot_user_id)
        if self._services.seen.first(message.key):
            self._handle(message, create=True, commands=True)

    async def on_message(self, context: AsyncBoltContext) -> None:
        bot = context.bot_user_id
        event = inbound_of(context)
        if isinstance(event, MessageEdit):
            return self._edit(edited(event, bot), event.edit_ts)
        if not isinstance(event, MessageEvent):
            return None
        message = incoming(event, bot)
        if not message.place.is_dm and f"<@{bot}>" in event.text:
            return None  # a mention: app_mention handles those
        if not message.place.is_dm and not event.thread_ts:
            return None  # channel chatter outside any thread the bot is in
        if self._services.seen.first(message.key):
            self._handle(message, create=message.place.is_dm, commands=message.place.is_dm)
        return None

    def _handle(self, message: Incoming, create: bool, commands: bool) -> None:
        """A mention or DM may be a command ("@hermes status"); the rest goes to the agent."""
        if not self._may_talk(message):
            return
        command = _command_in(message.text) if commands else None
        if command is not None:
            work = self._command(command, message.place, message.user)
        else:
            work = self._conversations.message(message, create)
        reply = in_thread(self._services, message.place)
        self._services.background.spawn(work, reply, f"message {message.ts}", queue=message.place.key)

    async def _command(self, command: Command, place: Place, user: str) -> None:
        try:
            payload = await self._commands.run(command, Where(place.team, place.channel, user, place))
        except Busy:
            session = await bindings.bound_session(place.key)
            if session is None:
                raise
            await self._conversations.refuse_busy(session.id, place)  # with the Stop button
            return
        await self._services.sender.post(place.team, place.channel, place.reply_thread, payload)

    def _edit(self, message: Incoming | None, edit_ts: str) -> None:
        if message is None or not self._services.seen.first(("edit", *message.key, edit_ts)):
            return
        if not self._may_talk(message):
            return
        reply = in_thread(self._services, message.place)
        self._services.background.spawn(self._conversations.edit(message), reply, f"edit {message.ts}",
                                        queue=message.place.key)

    def _may_talk(self, message: Incoming) -> bool:
        """Whether the author may talk to the bot (ALLOWED_USERS); one who may not is told
        so privately, once per conversation (remembered in a bounded memory of this replica,
        so a restart or another replica may tell them once more), and nothing runs."""
        services, place, user = self._services, message.place, message.user
        if services.policy.may_talk(user):
            return True
        if services.told_not_allowed.first((place.key, user)):
            services.background.spawn(
                services.sender.ephemeral(place.team, place.channel, user, NOT_ALLOWED,
                                          place.reply_thread),
                unheard, f"not allowed {message.ts}", queue=place.key)
        return False


def _command_in(text: str) -> Command | None:
    return mention_command(text) if text else Command("help")
