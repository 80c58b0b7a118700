"""Pointing discord.py at the fake: `Route.BASE` and `DiscordWebSocket.DEFAULT_GATEWAY`."""

from __future__ import annotations

import discord
import yarl


class DiscordPatch:
    """Sets discord.py's REST base and default gateway; restores them on exit.

    Usable with `with` or `async with` (so it can share an `async with` line with the fake).
    """

    def __init__(self, api_base: str, gateway_url: str) -> None:
        self._new = (api_base, yarl.URL(gateway_url))
        self._old: tuple[str, yarl.URL] | None = None

    def __enter__(self) -> DiscordPatch:
        self._old = (discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY)
        discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = self._new
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._old is not None
        discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = self._old

    async def __aenter__(self) -> DiscordPatch:
        return self.__enter__()

    async def __aexit__(self, *exc: object) -> None:
        self.__exit__()
