"""DISCORD_API_URL and DISCORD_GATEWAY_URL: where discord.py sends REST and gateway traffic
(a proxy, or a test double). discord.py keeps both on classes, so they are set at start and
put back at stop."""

from __future__ import annotations

import discord
import yarl

from core.config import Settings


class Endpoints:
    def __init__(self, settings: Settings) -> None:
        self._api = settings.discord_api_url.rstrip("/")
        self._gateway = settings.discord_gateway_url
        self._saved: tuple[str, yarl.URL] | None = None

    def apply(self) -> None:
        ws = discord.gateway.DiscordWebSocket
        self._saved = (discord.http.Route.BASE, ws.DEFAULT_GATEWAY)
        discord.http.Route.BASE = self._api
        if self._gateway:
            ws.DEFAULT_GATEWAY = yarl.URL(self._gateway)

    def restore(self) -> None:
        if self._saved is not None:
            discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = self._saved
            self._saved = None
