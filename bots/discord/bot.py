"""`DiscordBot`: the Discord adapter as one object that `hermes-chat serve` starts and stops."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from bots.discord.client import HermesClient
from bots.discord.endpoints import Endpoints
from bots.discord.services import build_services
from bots.discord.supervisor import RECONNECT_BACKOFF, GatewaySupervisor
from bots.discord.writer import WRITE_TIMEOUT
from core.backoff import Backoff
from core.bridge.port import Bridge
from core.catalogue import Catalogue
from core.config import Settings
from core.errors import InvalidInput
from core.platform_links import PlatformLink
from core.ratelimit import RateLimiter
from core.runtime.pool import RunPool

log = logging.getLogger(__name__)
DRAIN_SECONDS = 5.0  # at stop, how long pending message edits may still go out


class DiscordBot:
    """Chat with the agent in Discord channels, threads and DMs (DESIGN §6).

    `limiter` budgets every channel's writes (default: a RateLimiter on `clock`);
    `write_timeout` (seconds) ends a message write that hangs, counted as Discord down;
    `client_options` go to discord.Client (e.g. `guild_ready_timeout`);
    `link` is told the gateway connection's state, `reconnect` paces the connections made
    again after one ended (bots/discord/supervisor.py).
    """

    def __init__(self, settings: Settings, pool: RunPool, catalogue: Catalogue, bridge: Bridge,
                 limiter: RateLimiter | None = None, clock: Callable[[], float] = time.monotonic,
                 *, client_options: Mapping[str, Any] | None = None,
                 write_timeout: float = WRITE_TIMEOUT, link: PlatformLink | None = None,
                 reconnect: Backoff = RECONNECT_BACKOFF) -> None:
        if not settings.discord_token:
            raise InvalidInput("DISCORD_TOKEN is unset: the Discord adapter cannot start")
        self._token = settings.discord_token
        self._endpoints = Endpoints(settings)
        self.client = HermesClient(link=link, **dict(client_options or {}))
        self.supervisor = GatewaySupervisor(self.client, self.client.link, reconnect)
        self.services = build_services(self.client, pool, catalogue, bridge,
                                       limiter or RateLimiter(clock), settings.discord_channels,
                                       write_timeout, settings.attachment_limits)
        self.client.attach(self.services)
        self._gateway: asyncio.Task[None] | None = None
        self._updates: asyncio.Task[None] | None = None

    @property
    def link(self) -> PlatformLink:
        """The gateway connection's state (ok / reconnecting / down), reconnects and drops."""
        return self.client.link

    @property
    def gateway_running(self) -> bool:
        """Whether the supervised connection is still kept (False once stopped for good)."""
        return self._gateway is not None and not self._gateway.done()

    async def start(self) -> None:
        """Log in (setup_hook registers persistent components and syncs commands), connect the
        gateway in the background, and follow the runs once ready."""
        self._endpoints.apply()
        try:
            await self.client.login(self._token)
        except BaseException:
            await self.client.close()
            self._endpoints.restore()
            raise
        self._gateway = asyncio.create_task(self.supervisor.run(), name="discord-gateway")
        self._gateway.add_done_callback(_report_gateway_end)
        self._updates = asyncio.create_task(self._follow_runs(), name="discord-live-updates")

    async def wait_until_ready(self, timeout: float = 30.0) -> None:
        """Until the gateway is ready; raises why if it failed first."""
        assert self._gateway is not None, "start() first"
        ready = asyncio.create_task(self.client.wait_until_ready())
        done, _ = await asyncio.wait({ready, self._gateway}, timeout=timeout,
                                     return_when=asyncio.FIRST_COMPLETED)
        if ready not in done:
            ready.cancel()
            if self._gateway in done:
                self._gateway.result()
            raise TimeoutError(f"Discord gateway not ready within {timeout}s")

    async def stop(self) -> None:
        """Stop following runs, let pending edits go out (briefly), close the connection."""
        if self._updates is not None:
            self._updates.cancel()
            await asyncio.gather(self._updates, return_exceptions=True)
        await self.services.outbox.close(DRAIN_SECONDS)
        self.supervisor.stop()
        await self.client.close()
        if self._gateway is not None:
            with contextlib.suppress(Exception):
                await self._gateway
        self._endpoints.restore()

    async def _follow_runs(self) -> None:
        await self.client.wait_until_ready()
        await self.services.updater.run()


def _report_gateway_end(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("the Discord gateway connection ended", exc_info=task.exception())
