"""The discord.py client: intents, persistent components and commands in `setup_hook`, and
the gateway events handed to the adapter's services."""

from __future__ import annotations

from typing import Any

import discord

from bots.discord.intake import CheckedCommandTree
from bots.discord.services import Services
from bots.discord.supervisor import close_reason
from bots.discord.views import ActionButton, ActionSelect
from core.platform_links import PlatformLink


def intents() -> discord.Intents:
    """Guilds, guild and DM messages, and the privileged message content intent."""
    chosen = discord.Intents.default()
    chosen.message_content = True
    return chosen


class HermesClient(discord.Client):
    """`link` hears when the gateway is ready, resumed or disconnected (health and metrics)."""

    def __init__(self, services: Services | None = None, *, link: PlatformLink | None = None,
                 **options: Any) -> None:
        super().__init__(intents=intents(), **options)
        self.tree = CheckedCommandTree(self)
        self._services = services
        self.link = link or PlatformLink()

    @property
    def hermes(self) -> Services:
        assert self._services is not None, "attach the services before logging in"
        return self._services

    def attach(self, services: Services) -> None:
        self._services = services

    async def setup_hook(self) -> None:
        """Runs at login: buttons/selects of earlier runs work again, commands are synced."""
        self.add_dynamic_items(ActionButton, ActionSelect)
        self.tree.add_command(self.hermes.commands)
        await self.tree.sync()

    def dispatch(self, event: str, /, *args: Any, **kwargs: Any) -> None:
        """The gateway's ready / resumed / disconnect events reach the link as they happen
        (commands.Bot extends dispatch the same way). Not `on_disconnect`: discord.py
        dispatches a disconnect after close() too, when it can no longer run a handler."""
        if event in ("ready", "resumed"):
            self.link.connected()
        elif event == "disconnect":
            self.link.lost(close_reason(self.ws))  # discord.py is reconnecting by itself
        super().dispatch(event, *args, **kwargs)

    async def on_message(self, message: discord.Message) -> None:
        await self.hermes.conversations.on_message(message)

    async def on_message_edit(self, before: discord.Message, after: discord.Message) -> None:
        await self.hermes.edits.on_message_edit(before, after)

    async def on_raw_message_edit(self, payload: discord.RawMessageUpdateEvent) -> None:
        await self.hermes.edits.on_raw_message_edit(payload)

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        await self.hermes.actions.on_interaction(interaction)
