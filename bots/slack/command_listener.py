"""`/hermes`: quick subcommands answer in the acknowledgement itself (only the user sees it);
the ones that call the Bridge or upload a file acknowledge at once and finish in a task."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp

from core.conversation.refusals import refusal_text
from core.errors import HermesChatError

from .blocks import Payload
from .command_words import parse_command
from .commands import Commands, Where
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
        app.command("/hermes")(self.on_command)

    async def on_command(self, ack: AsyncAck, command: dict[str, Any]) -> None:
        parsed = parse_command(command.get("text") or "")
        where = _where(command)
        if parsed.name not in SLOW:
            payload = await self._quick(self._commands.run(parsed, where))
            await ack(text=payload.text, blocks=payload.blocks)
            return
        await ack(text=f"⏳ {SLOW[parsed.name]}")
        reply = to_user(self._services, where.team, where.channel, where.user)
        self._services.background.spawn(self._slow(parsed.name, self._commands.run(parsed, where), where),
                                        reply, f"/hermes {parsed.name}")

    async def _quick(self, work: Any) -> Payload:
        try:
            return await work
        except HermesChatError as error:
            text = refusal_text(error)
            return Payload(text)

    async def _slow(self, name: str, work: Any, where: Where) -> None:
        payload = await work
        if name != "export":  # the export's file is its own message in the thread
            await self._services.sender.ephemeral(where.team, where.channel, where.user, payload.text,
                                                  blocks=payload.blocks or None)


def _where(command: dict[str, Any]) -> Where:
    team, channel, user = command.get("team_id", ""), command.get("channel_id", ""), command.get("user_id", "")
    dm = is_dm(channel)
    place = place_of(team, channel, "", None, "im") if dm else None
    return Where(team, channel, user, place)
