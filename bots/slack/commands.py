"""What each `/hermes` subcommand says on Slack; `core.conversation.commands` decides what it
does, and the listeners decide where the reply goes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from core.conversation import bindings, commands
from core.conversation.refusals import NO_CONVERSATION
from core.errors import NotFound
from core.models import ChatSession, Platform
from core.sessions import ThreadKey, session_for_thread

from .blocks import Payload, section
from .command_words import Command, help_text
from .menus import choice_menu
from .places import Place
from .services import Services
from .status_view import memory_payload, status_payload


@dataclass(frozen=True, slots=True)
class Where:
    """Where a command was given: a thread (a mention, a DM) or just a channel (slash)."""

    team: str
    channel: str
    user: str
    place: Place | None = None  # known for mentions and DMs


Handler = Callable[["Commands", Command, Where], Awaitable[Payload]]


class Commands:
    def __init__(self, services: Services) -> None:
        self._services = services

    async def run(self, command: Command, where: Where) -> Payload:
        return await HANDLERS[command.name](self, command, where)

    async def help(self, command: Command, where: Where) -> Payload:
        return _text(help_text(command))

    async def status(self, command: Command, where: Where) -> Payload:
        return status_payload(commands.status(self._services.pool, await self._existing(where)))

    async def new(self, command: Command, where: Where) -> Payload:
        replaced = await self._existing(where)
        if where.place is not None:
            await commands.new_conversation(where.place.key, replaced)
            return _text("🆕 New conversation: what I knew in this thread before is forgotten.")
        root = await self._services.sender.post(where.team, where.channel, None, _text(
            f"🧵 <@{where.user}> started a new conversation with Hermes. Reply in this thread."))
        key = ThreadKey(Platform.SLACK, where.team, where.channel, root)
        await commands.new_conversation(key, replaced)
        return _text("🆕 New conversation started: reply in its thread.")

    async def reset(self, command: Command, where: Where) -> Payload:
        session = await self._session(where)
        await commands.reset(self._services.bridge, session.id)
        return _text(f"🔄 <@{where.user}> reset the agent of this conversation "
                     "(a fresh agent session; the messages here are kept).")

    async def model(self, command: Command, where: Where) -> Payload:
        session = await self._session(where)
        catalogue = self._services.catalogue
        if command.argument is None:
            options = [(m.id, m.name) for m in catalogue.models]
            return choice_menu("model", session.id, options, session.model_id)
        entry = await commands.choose_model(catalogue, session.id, command.argument)
        return _text(model_chosen(entry.name, entry.id))

    async def skill(self, command: Command, where: Where) -> Payload:
        session = await self._session(where)
        if command.argument is None:
            options = [(s.folder, s.name) for s in self._services.catalogue.skills()]
            return choice_menu("skill", session.id, options, session.skill_folder)
        skill = await commands.choose_skill(self._services.catalogue, session.id, command.argument)
        return _text(skill_chosen(skill.name if skill else None))

    async def memory(self, command: Command, where: Where) -> Payload:
        session = await self._session(where)
        return memory_payload(await commands.memory(self._services.bridge, session.id))

    async def export(self, command: Command, where: Where) -> Payload:
        session = await self._session(where)
        export = await commands.export(session.id, *commands.export_options(command.argument))
        binding = await bindings.latest_binding(session.id, Platform.SLACK)
        channel = binding.channel if binding else where.channel
        thread = (binding.thread or None) if binding else None
        await self._services.sender.upload(where.team, channel, thread, export.filename,
                                           export.content,
                                           f"📎 <@{where.user}> exported this conversation")
        return _text(f"📎 Exported `{export.filename}` to the conversation's thread.")

    async def _session(self, where: Where) -> ChatSession:
        """The command's conversation: its thread's (created if new), else the channel's latest."""
        if where.place is not None:
            return (await session_for_thread(where.place.key))[0]
        session = await self._existing(where)
        if session is None:
            raise NotFound(NO_CONVERSATION)
        return session

    async def _existing(self, where: Where) -> ChatSession | None:
        if where.place is not None:
            return await bindings.bound_session(where.place.key)
        binding = await bindings.latest_in_channel(Platform.SLACK, where.team, where.channel)
        return binding.session if binding else None


HANDLERS: dict[str, Handler] = {
    "help": Commands.help, "status": Commands.status, "new": Commands.new,
    "reset": Commands.reset, "model": Commands.model, "skill": Commands.skill,
    "memory": Commands.memory, "export": Commands.export,
}


def model_chosen(name: str, model_id: str) -> str:
    return f"✅ This conversation now uses the model *{name}* (`{model_id}`)."


def skill_chosen(name: str | None) -> str:
    if name is None:
        return "✅ This conversation now uses no skill."
    return f"✅ This conversation now uses the skill *{name}*."


def _text(text: str) -> Payload:
    return Payload(text, [section(text)])
