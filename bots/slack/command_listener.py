"""`/hermes`: quick subcommands answer in the acknowledgement itself (only the user sees it);
the ones that call the Bridge or upload a file acknowledge at once and finish in a task."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext

from core.conversation.refusals import NOT_ALLOWED

from . import ids
from .command_words import parse_command
from .commands import Commands, Where
from .inbound import SlashCommand
from .intake import typed
from .places import is_dm, place_of
from .replies import to_user
from .services import Services

SLOW = {"reset": "Resetting…", "memory": "Reading the agent's memory…", "export": "Exporting…",
        "new": "Starting a new conversation…"}  # these call the Bridge or post to Slack


class CommandListener:
    def __init__(self, services: Services, commands: Commands) -> None:
        self._services = services
        self._commands = commands

    def register(self, app: AsyncApp) -> None:
        app.command(ids.COMMAND)(self.on_command)

    async def on_command(self, ack: AsyncAck, context: AsyncBoltContext) -> None:
        command = typed(context, SlashCommand)
        if not self._services.policy.may_talk(command.user):
            await ack(text=NOT_ALLOWED)  # the command's own reply, which only its user sees
            return
        parsed = parse_command(command.text)
        where = _where(command)
        if parsed.name not in SLOW:  # a refusal here is the acknowledgement (boundary.py)
            payload = await self._commands.run(parsed, where)
            await ack(text=payload.text, blocks=payload.blocks)
            return
        await ack(text=f"⏳ {SLOW[parsed.name]}")
        reply = to_user(self._services, where.team, where.channel, where.user)
        self._services.background.spawn(self._slow(parsed.name, self._commands.run(parsed, where), where),
                                        reply, f"/hermes {parsed.name}")

    async def _slow(self, name: str, work: Any, where: Where) -> None:
        payload = await work
        if name != "export":  # the export's file is its own message in the thread
            await self._services.sender.ephemeral(where.team, where.channel, where.user, payload.text,
                                                  blocks=payload.blocks or None)


def _where(command: SlashCommand) -> Where:
    team, channel, user = command.team, command.channel, command.user
    dm = is_dm(channel)
    place = place_of(team, channel, "", None, "im") if dm else None
    return Where(team, channel, user, place)
