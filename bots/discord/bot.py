"""`DiscordBot`: the Discord adapter as one object that `hermes-chat serve` starts and stops,
the composition of its parts (bots/discord/services.py), and the discord.py client they hang on.

The client's `setup_hook` registers the actions (bots/discord/actions/, commands.py) as
DynamicItems, so buttons of earlier runs work again, and syncs `/hermes`; its gateway events go
to the conversation (messages, edits) and to the actions (what discord.py does not route).
DISCORD_API_URL and DISCORD_GATEWAY_URL say where discord.py sends REST and gateway traffic (a
proxy, or a test double): discord.py keeps both on classes, so they are set at start and put
back at stop (`Endpoints`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

import discord
import yarl

from bots.discord.actions import (
    Label,
    approvals,
    busy,
    clarify,
    on_unrouted_interaction,
    thinking,
    turn,
)
from bots.discord.commands import SELECTS, HermesCommands
from bots.discord.delivery.writer import WRITE_TIMEOUT
from bots.discord.files import DiscordFiles
from bots.discord.intake import DiscordCommandTree
from bots.discord.schedules import DiscordScheduledThreads, ScheduleCommands
from bots.discord.services import DiscordServices
from bots.discord.shards import ShardFleet
from bots.discord.supervisor import RECONNECT_BACKOFF, GatewaySupervisor, close_reason
from core.config import Settings
from core.conversation.vocabulary import AllShards, Bridge, Catalogue, FileReader, RunPool, Shards
from core.edge.backoff import Backoff
from core.edge.platform_links import LinkState, PlatformLink
from core.edge.ratelimit import RateLimiter
from core.errors import InvalidInput

log = logging.getLogger(__name__)
DRAIN_SECONDS = 5.0  # at stop, how long pending message edits may still go out
ITEMS = (*turn.ITEMS, *clarify.ITEMS, *approvals.ITEMS, *thinking.ITEMS, *busy.ITEMS, Label,
         *SELECTS)


class DiscordBot:
    """Chat with the agent in Discord channels, threads and DMs.

    `limiter` budgets every channel's writes (default: a RateLimiter on `clock`);
    `write_timeout` (seconds) ends a message write that hangs, counted as Discord down;
    `client_options` go to discord.Client (e.g. `guild_ready_timeout`);
    `link` is told the gateway connection's state, `reconnect` paces the connections made
    again after one ended (bots/discord/supervisor.py).

    `shards` makes the claims of a shard count (core/runtime/shards.py: PostgreSQL's
    `ShardClaims` for several replicas); given, or with more than one shard, the gateway is
    connected one client per shard held (bots/discord/shards.py). The count is
    DISCORD_SHARD_COUNT, else Discord's recommendation. With one shard and no claims (one
    replica, on SQLite) `client` connects it alone, unsharded.
    """

    def __init__(self, settings: Settings, pool: RunPool, catalogue: Catalogue, bridge: Bridge,
                 limiter: RateLimiter | None = None, clock: Callable[[], float] = time.monotonic,
                 *, client_options: Mapping[str, Any] | None = None,
                 write_timeout: float = WRITE_TIMEOUT, link: PlatformLink | None = None,
                 reconnect: Backoff = RECONNECT_BACKOFF,
                 shards: Callable[[int], Shards] | None = None,
                 files: FileReader | None = None) -> None:
        """`files`: the replica's file reader (`serve` shares one); by default the bot's own,
        closed by `stop()`."""
        if not settings.discord_token:
            raise InvalidInput("DISCORD_TOKEN is unset: the Discord adapter cannot start")
        self._token = settings.discord_token
        self._endpoints = Endpoints(settings)
        self._client_options = dict(client_options or {})
        self.client = HermesClient(link=link, **self._client_options)
        self.supervisor = GatewaySupervisor(self.client, self.client.link, reconnect)
        self._reconnect = reconnect
        self._shard_count = settings.discord_shard_count
        self._claims_for = shards if shards is not None else (
            AllShards if self._shard_count > 1 else None)
        self.fleet: ShardFleet | None = None
        self._own_files = files is None
        self.files = files if files is not None else FileReader(settings.attachment_limits)
        self.services = DiscordServices.build(
            self.client, pool, catalogue, bridge, limiter or RateLimiter(clock),
            settings.discord_channels, settings.policy, write_timeout, self.files,
            settings.thread_context_messages, self.cached_channel,
            DiscordFiles(settings.discord_file_origins), usage=settings.usage_shown,
            schedule_timezone=settings.schedule_timezone)
        self.client.attach(self.services)
        self.scheduled_threads = DiscordScheduledThreads(self.client, self.services)
        self._gateway: asyncio.Task[None] | None = None
        self._updates: asyncio.Task[None] | None = None
        self._logged_in = asyncio.Event()  # and the shards (or none) decided

    def cached_channel(self, channel_id: int) -> object | None:
        """The channel as a gateway cache here has it: unsharded the main client's; sharded
        (the main client has no gateway) the cache of the shard held here that has it."""
        if self.fleet is None:
            return self.client.get_channel(channel_id)
        return self.fleet.cached_channel(channel_id)

    @property
    def link(self) -> PlatformLink:
        """The gateway connection's state (ok / reconnecting / down), reconnects and drops."""
        return self.client.link

    @property
    def gateway_running(self) -> bool:
        """Whether the supervised connection is still kept (False once stopped for good)."""
        return self._gateway is not None and not self._gateway.done()

    async def start(self) -> None:
        """Connect in the background (`serve` never waits for Discord): log in (setup_hook
        registers persistent components and syncs commands), again with backoff while Discord
        cannot be reached, then keep the gateway connected and follow the runs once ready."""
        self._endpoints.apply()
        self._gateway = asyncio.create_task(self._connect(), name="discord-gateway")
        self._gateway.add_done_callback(_report_gateway_end)

    async def _connect(self) -> None:
        if not await self.supervisor.log_in(self._token):
            return  # refused (the link says why) or stopped
        claims_for, count = self._claims_for, self._shard_count
        if count < 1:
            count = await self._recommended_count()
            if claims_for is None and count > 1:
                claims_for = AllShards  # one replica still shards as Discord asks
        if claims_for is not None:
            self.fleet = ShardFleet(claims_for(count), self._shard_client,
                                    lambda client: GatewaySupervisor(client, self.link, self._reconnect),
                                    self._token, self.link)
        self._logged_in.set()
        self._updates = asyncio.create_task(self._follow_runs(), name="discord-live-updates")
        await (self.supervisor.run() if self.fleet is None else self.fleet.run())

    async def wait_until_ready(self, timeout: float = 30.0) -> None:
        """Until the gateway is ready; raises why if it failed first."""
        assert self._gateway is not None, "start() first"
        ready = asyncio.create_task(self._ready())
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
        await self.services.catch_up.close()
        await self.services.outboxes.close(DRAIN_SECONDS)
        self.supervisor.stop()
        if self.fleet is not None:
            self.fleet.stop()  # its run closes every shard's client, then the claims go
        else:
            await self.client.close()
        if self._gateway is not None:
            with contextlib.suppress(Exception):
                await self._gateway
        if self.fleet is not None:
            await self.fleet.release()
            await self.client.close()
        self._endpoints.restore()
        if self._own_files:
            await self.files.close()

    async def _ready(self) -> None:
        """Unsharded: the gateway's READY. Sharded: the shards this replica holds are open."""
        await self._logged_in.wait()
        if self.fleet is None:
            await self.client.wait_until_ready()
        else:
            await self.fleet.stepped.wait()

    async def _follow_runs(self) -> None:
        if self.fleet is None:
            await self.client.wait_until_ready()
        await self.services.follower.run()  # sharded: the main client writes by REST alone

    async def _recommended_count(self) -> int:
        """Discord's recommended shard count (GET /gateway/bot); 1 if it cannot say."""
        try:
            count, _, _ = await self.client.http.get_bot_gateway()
        except (discord.HTTPException, discord.GatewayNotFound, OSError) as error:
            log.warning("discord: could not ask for the recommended shard count (%s); one shard",
                        error)
            return 1
        count = max(1, int(count))
        if count > 1:
            log.info("discord: %d gateway shards, as Discord recommends", count)
        return count

    def _shard_client(self, shard: int, count: int) -> discord.Client:
        client = HermesClient(link=self.link, sync_commands=False, shard_id=shard,
                              shard_count=count, **self._client_options)
        client.attach(self.services)
        return client


def _report_gateway_end(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("the Discord gateway connection ended", exc_info=task.exception())


def intents() -> discord.Intents:
    """Guilds, guild and DM messages, and the privileged message content intent."""
    chosen = discord.Intents.default()
    chosen.message_content = True
    return chosen


class HermesClient(discord.Client):
    """`link` hears when the gateway is ready, resumed or disconnected (health and metrics)."""

    services: DiscordServices | None = None

    def __init__(self, *, link: PlatformLink | None = None, sync_commands: bool = True,
                 **options: Any) -> None:
        super().__init__(intents=intents(), **options)
        self.tree = DiscordCommandTree(self)
        self.link = link or PlatformLink()
        self._sync_commands = sync_commands  # once per replica: the main client does

    @property
    def hermes(self) -> DiscordServices:
        assert self.services is not None, "attach the services before logging in"
        return self.services

    def attach(self, services: DiscordServices) -> None:
        self.services = services
        self.tree.intake = services.intake

    async def setup_hook(self) -> None:
        """Runs at login: buttons/selects of earlier runs work again, commands are synced."""
        self.add_dynamic_items(*ITEMS)
        hermes = HermesCommands()
        hermes.add_command(ScheduleCommands())
        self.tree.add_command(hermes)
        if self._sync_commands:
            await self.tree.sync()

    def dispatch(self, event: str, /, *args: Any, **kwargs: Any) -> None:
        """The gateway's ready / resumed / disconnect events reach the link as they happen
        (commands.Bot extends dispatch the same way). Not `on_disconnect`: discord.py
        dispatches a disconnect after close() too, when it can no longer run a handler."""
        if event in ("ready", "resumed"):
            if self.link.state is not LinkState.OK:  # one line per change of state
                log.info("discord: gateway connected (%s)", event.upper())
            self.link.connected()
        elif event == "disconnect":
            self.link.lost(close_reason(self.ws))  # discord.py is reconnecting by itself
        super().dispatch(event, *args, **kwargs)

    async def on_ready(self) -> None:
        """A new gateway session: what people sent while none listened is read (catch_up.py)."""
        self.hermes.catch_up.start(self)

    async def on_message(self, message: discord.Message) -> None:
        await self.hermes.conversation.on_message(message)

    async def on_message_edit(self, before: discord.Message, after: discord.Message) -> None:
        await self.hermes.conversation.on_message_edit(before, after)

    async def on_raw_message_edit(self, payload: discord.RawMessageUpdateEvent) -> None:
        await self.hermes.conversation.on_raw_message_edit(payload)

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        await on_unrouted_interaction(interaction, (*ITEMS, *clarify.MODALS))


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
