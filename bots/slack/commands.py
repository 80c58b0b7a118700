"""What each `/hermes` subcommand does; the listeners decide where the reply goes."""

from __future__ import annotations

from dataclasses import dataclass

from core import sessions
from core.errors import Busy, NotFound
from core.export import prepare_export
from core.models import ChatSession, Platform
from core.sessions import ThreadKey

from . import lookups
from .blocks import Payload, section
from .command_words import Command, help_text
from .menus import choice_menu
from .places import Place
from .services import Services
from .status_view import memory_payload, status_payload

NO_CONVERSATION = "There is no conversation in this channel yet: mention me to start one."


@dataclass(frozen=True, slots=True)
class Where:
    """Where a command was given: a thread (a mention, a DM) or just a channel (slash)."""

    team: str
    channel: str
    user: str
    place: Place | None = None  # known for mentions and DMs


class Commands:
    def __init__(self, services: Services) -> None:
        self._services = services

    async def run(self, command: Command, where: Where) -> Payload:
        handler = getattr(self, f"_{command.name}")
        return await handler(command, where)

    async def _help(self, command: Command, where: Where) -> Payload:
        return _text(help_text(command))

    async def _status(self, command: Command, where: Where) -> Payload:
        session = await self._existing(where)
        return status_payload(self._services.pool.active(), session)

    async def _new(self, command: Command, where: Where) -> Payload:
        session = await sessions.create_session()
        if where.place is not None:
            await sessions.bind_thread(session.id, where.place.key)
            return _text("🆕 New conversation: what I knew in this thread before is forgotten.")
        root = await self._services.sender.post(where.team, where.channel, None, _text(
            f"🧵 <@{where.user}> started a new conversation with Hermes. Reply in this thread."))
        await sessions.bind_thread(session.id, ThreadKey(Platform.SLACK, where.team, where.channel, root))
        return _text("🆕 New conversation started: reply in its thread.")

    async def _reset(self, command: Command, where: Where) -> Payload:
        session = await self._session(where)
        if any(u.session_id == session.id for u in self._services.pool.active()):
            raise Busy("this conversation has a run in flight; stop it before resetting")
        await self._services.bridge.reset_session(session.hermes_session)
        await sessions.renew_hermes_session(session.id)
        return _text(f"🔄 <@{where.user}> reset the agent of this conversation "
                     "(a fresh agent session; the messages here are kept).")

    async def _model(self, command: Command, where: Where) -> Payload:
        session = await self._session(where)
        catalogue = self._services.catalogue
        if command.argument is None:
            options = [(m.id, m.name) for m in catalogue.models]
            return choice_menu("model", session.id, options, session.model_id)
        entry = catalogue.model(command.argument)
        await sessions.update_session_defaults(session.id, model_id=entry.id)
        return _text(f"✅ This conversation now uses the model *{entry.name}* (`{entry.id}`).")

    async def _skill(self, command: Command, where: Where) -> Payload:
        session = await self._session(where)
        if command.argument is None:
            options = [(s.folder, s.name) for s in self._services.catalogue.skills()]
            return choice_menu("skill", session.id, options, session.skill_folder)
        skill = self._services.catalogue.skill(command.argument)
        await sessions.update_session_defaults(session.id, skill_folder=skill.folder)
        return _text(f"✅ This conversation now uses the skill *{skill.name}*.")

    async def _memory(self, command: Command, where: Where) -> Payload:
        session = await self._session(where)
        return memory_payload(await self._services.bridge.get_memory(session.hermes_session))

    async def _export(self, command: Command, where: Where) -> Payload:
        session = await self._session(where)
        export = await prepare_export(session.id, *export_options(command.argument))
        content = "".join([chunk async for chunk in export.chunks()]).encode()
        binding = await lookups.latest_binding(session.id)
        channel = binding.channel if binding else where.channel
        thread = (binding.thread or None) if binding else None
        await self._services.sender.upload(where.team, channel, thread, export.filename, content,
                                           f"📎 <@{where.user}> exported this conversation")
        return _text(f"📎 Exported `{export.filename}` to the conversation's thread.")

    async def _session(self, where: Where) -> ChatSession:
        """The command's conversation: its thread's (created if new), else the channel's latest."""
        if where.place is not None:
            return (await sessions.session_for_thread(where.place.key))[0]
        session = await self._existing(where)
        if session is None:
            raise NotFound(NO_CONVERSATION)
        return session

    async def _existing(self, where: Where) -> ChatSession | None:
        if where.place is not None:
            return await lookups.bound_session(where.place.key)
        binding = await lookups.latest_in_channel(where.team, where.channel)
        return binding.session if binding else None


def export_options(argument: str | None) -> tuple[str, str]:
    """`[md|json] [active|all]` in any order; an unknown word is taken as the format (and refused)."""
    format_, branch = "md", "active"
    for word in (argument or "").lower().split():
        if word in ("active", "all"):
            branch = word
        else:
            format_ = word
    return format_, branch


def _text(text: str) -> Payload:
    return Payload(text, [section(text)])

