"""`FakeDiscord`: Discord's REST API and gateway on a random 127.0.0.1 port, for discord.py.

    async with FakeDiscord() as fake, fake.patch_discord():
        client = discord.Client(intents=intents, guild_ready_timeout=0.05)
        async with fake.connected(client):
            sent = await fake.send_user_message(f"<@{fake.bot_id}> hi")
            await fake.wait_for_call("POST /channels/{channel_id}/messages")
            assert fake.messages_in(fake.channel_id)[-1]["content"] == "hello"
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

import discord
from aiohttp import web

from tests.fakes.changes import WAIT

from . import rest_app, rest_channels, rest_interactions
from .clock import Clock, monotonic
from .core import CORE_KEY, FakeCore
from .driving import Driving
from .faults import FaultBoard, Hang, Outage
from .gateway import Gateway
from .limits import Limits
from .middleware import discord_middleware
from .notify import Notifier
from .patch import DiscordPatch
from .ratelimit import RateLimiter
from .records import Call, InteractionRecord
from .world import World

Payload = dict[str, Any]
Id = int | str


class FakeDiscord(Driving):
    """A fake Discord for one test. See the package docstring for what it models.

    Options: `limits` (what is enforced), `clock` (windows, deadlines and call times),
    `heartbeat_interval` (seconds, sent in HELLO), `compress` (honour
    `compress=zlib-stream`), `privileged_intents` (False: IDENTIFY with message content
    or members intent is closed with 4014, as for an application without them).
    """

    def __init__(
        self,
        *,
        token: str = "fake-bot-token",
        limits: Limits | None = None,
        clock: Clock = monotonic,
        heartbeat_interval: float = 41.25,
        compress: bool = True,
        privileged_intents: bool = True,
        bot_name: str = "hermes",
        port: int = 0,
    ) -> None:
        world = World(bot_name)
        notifier = Notifier()
        limits = limits or Limits()
        gateway = Gateway(
            world, token, notifier, heartbeat_interval=heartbeat_interval, compress=compress,
            privileged_intents=privileged_intents,
        )
        self.core = FakeCore(
            token, limits, clock, world, notifier, FaultBoard(notifier.notify, clock),
            RateLimiter(limits, clock), gateway,
        )
        self._runner: web.AppRunner | None = None
        self._port = port  # 0: a free one

    # -- lifecycle --------------------------------------------------------------------

    async def __aenter__(self) -> FakeDiscord:
        app = web.Application(middlewares=[discord_middleware], client_max_size=64 * 1024 * 1024)
        app[CORE_KEY] = self.core
        app.router.add_get("/gateway", self.core.gateway.handle)
        for module in (rest_app, rest_channels, rest_interactions):
            module.add_routes(app)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self._port))
        self._port = sock.getsockname()[1]
        await web.SockSite(self._runner, sock).start()
        self.core.base_url = f"http://127.0.0.1:{self._port}"
        self.core.gateway.url = f"ws://127.0.0.1:{self._port}/gateway"
        return self

    async def __aexit__(self, exc_type: object, *exc: object) -> None:
        self.core.faults.release_all()
        await self.core.gateway.close()
        if self._runner is not None:
            await self._runner.cleanup()
        if self.core.internal_errors and exc_type is None:
            raise AssertionError(f"fake Discord failed internally: {self.core.internal_errors!r}")

    def patch_discord(self) -> DiscordPatch:
        """Point discord.py's REST base and default gateway at this fake (`with`/`async with`)."""
        return DiscordPatch(self.api_base, self.gateway_url)

    @contextlib.asynccontextmanager
    async def connected(
        self, client: discord.Client, timeout: float = WAIT
    ) -> AsyncIterator[discord.Client]:
        """Log `client` in, run it until ready; close it and await its task on exit.

        Login failures (`discord.LoginFailure`) and gateway failures before READY raise here.
        """
        try:
            await client.login(self.token)
            task = asyncio.create_task(client.connect(), name="fake-discord-client")
        except BaseException:
            await client.close()
            raise
        try:
            ready = asyncio.create_task(client.wait_until_ready())
            done, _ = await asyncio.wait(
                {task, ready}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
            if ready not in done:
                ready.cancel()
                if task in done:
                    task.result()  # the gateway failed: raise why
                raise AssertionError(f"discord client not ready within {timeout}s")
            yield client
        finally:
            await client.close()
            await asyncio.wait({task}, timeout=timeout)
        if not task.done():
            task.cancel()
            raise AssertionError(f"discord client still running {timeout}s after close()")
        task.result()  # the client crashed while the test ran: raise why

    # -- addresses and the world --------------------------------------------------------

    @property
    def base_url(self) -> str:
        return self.core.base_url

    @property
    def api_base(self) -> str:
        """For `discord.http.Route.BASE`."""
        return f"{self.core.base_url}/api/v10"

    @property
    def gateway_url(self) -> str:
        """For `DiscordWebSocket.DEFAULT_GATEWAY` (also READY's resume_gateway_url)."""
        return self.core.gateway.url

    @property
    def token(self) -> str:
        return self.core.token

    @property
    def world(self) -> World:
        return self.core.world

    @property
    def gateway(self) -> Gateway:
        """Frames (`gateway.frames`, `received(op)`, `sent(event)`), connections, session."""
        return self.core.gateway

    @property
    def bot(self) -> Payload:
        return self.world.bot

    @property
    def bot_id(self) -> int:
        return int(self.world.bot["id"])

    @property
    def application_id(self) -> int:
        return int(self.world.application_id)

    @property
    def guild_id(self) -> int:
        return int(self.world.guild_id)

    @property
    def channel_id(self) -> int:
        """The default text channel, #general."""
        return int(self.world.channel_id)

    @property
    def user(self) -> Payload:
        """The default human member, alice."""
        return self.world.human

    def add_user(self, username: str) -> Payload:
        """Another human, member of every guild (add before the client connects)."""
        user = self.world.add_user(username)
        for guild_id in self.world.guilds:
            self.world.add_member(user, guild_id)
        return user

    def add_text_channel(self, name: str) -> int:
        """Another channel in the default guild (add before the client connects)."""
        return int(self.world.add_text_channel(name, guild_id=self.world.guild_id)["id"])

    def add_guild(self, name: str, *, shard: tuple[int, int] | None = None) -> int:
        """Another guild (with every human in it) and its #general channel; returns the
        channel's id. `shard` (id, count): a guild on that gateway shard."""
        guild_id = self.world.add_guild(name, shard)["id"]
        for user in self.world.users.values():
            if not user.get("bot"):
                self.world.add_member(user, guild_id)
        return int(self.world.add_text_channel("general", guild_id=guild_id)["id"])

    def add_forum_channel(self, name: str) -> int:
        """A forum channel (type 15) in the default guild (add before the client connects)."""
        return int(self.world.add_forum_channel(name, guild_id=self.world.guild_id)["id"])

    def dm_channel_id(self, user: Payload | None = None) -> int:
        """The DM channel between the bot and `user` (alice by default)."""
        return int(self.world.dm_channel(user or self.world.human)["id"])

    # -- reading the state ------------------------------------------------------------

    def message(self, message_id: Id) -> Payload:
        """The current state of a message (content, embeds, components, flags, thread...)."""
        return self.world.messages[str(message_id)]

    def messages_in(self, channel_id: Id) -> list[Payload]:
        """Messages of a channel or thread, oldest first (ephemeral ones have flag 64)."""
        return self.world.channel_messages_of(str(channel_id))

    def channel(self, channel_id: Id) -> Payload:
        return self.world.channels[str(channel_id)]

    def threads_of(self, channel_id: Id) -> list[Payload]:
        return [c for c in self.world.channels.values() if c.get("parent_id") == str(channel_id)]

    def reactions_on(self, message_id: Id) -> list[str]:
        """The emoji the bot has on a message now (added and not removed), oldest first."""
        return self.world.reactions_of(str(message_id))

    def interaction(self, interaction_id: Id) -> InteractionRecord:
        """An interaction the fake dispatched, with the bot's callbacks, original and follow-ups."""
        return self.core.interactions[str(interaction_id)]

    def commands(self, guild_id: Id | None = None) -> list[Payload]:
        return self.world.commands.get(None if guild_id is None else str(guild_id), [])

    def attachment(self, attachment_id: Id) -> bytes:
        return self.world.attachments[str(attachment_id)]

    @property
    def calls(self) -> list[Call]:
        """Every REST call, in arrival order, with the fake clock's time in `at`."""
        return list(self.core.calls)

    def calls_to(self, route: str) -> list[Call]:
        """Calls of one route key, e.g. `"PATCH /channels/{channel_id}/messages/{message_id}"`."""
        return [c for c in self.core.calls if c.route == route]

    @property
    def rate_limited(self) -> list[Call]:
        """Calls answered 429."""
        return [c for c in self.core.calls if c.status == 429]

    @property
    def rejected(self) -> list[Call]:
        """Calls answered with any 4xx (429 included)."""
        return [c for c in self.core.calls if c.status is not None and 400 <= c.status < 500]

    # -- waiting ----------------------------------------------------------------------

    async def wait_until(
        self, predicate: Callable[[], object], timeout: float = WAIT, what: str = "condition"
    ) -> None:
        """Re-check `predicate()` on every change of the fake (and every 50 ms) until it holds."""
        await self.core.notifier.wait_until(predicate, timeout, what)

    async def wait_for_call(self, route: str, *, count: int = 1, timeout: float = WAIT) -> Call:
        """The `count`-th answered call of `route`."""
        def answered() -> list[Call]:
            return [c for c in self.calls_to(route) if c.status is not None]

        what = f"{count} answered call(s) of {route}"
        await self.wait_until(lambda: len(answered()) >= count, timeout, what)
        return answered()[count - 1]

    async def wait_for_response(
        self, interaction: InteractionRecord, timeout: float = WAIT
    ) -> Payload:
        """The first callback the bot posted for `interaction`."""
        what = f"a response to interaction {interaction.id}"
        await self.wait_until(lambda: interaction.callbacks, timeout, what)
        return interaction.callbacks[0]

    # -- faults -----------------------------------------------------------------------

    def fail_next(self, route: str, *, times: int = 1, status: int = 503, body: Any = None,
                  headers: dict[str, str] | None = None) -> None:
        """Answer the next `times` calls of `route` (wildcards allowed) with `status`
        (and `headers`, e.g. a 429's Retry-After)."""
        self.core.faults.fail(route, times=times, status=status, body=body, headers=headers)

    def hang_next(self, route: str, *, times: int = 1) -> Hang:
        """Hold the next `times` calls of `route` until `hang.release()` (or the fake closes)."""
        return self.core.faults.hang(route, times=times)

    def outage(self, seconds: float, route: str = "*", *, status: int = 503,
               hang: bool = False) -> Outage:
        """Discord down for `seconds` of the fake's clock from now: calls of `route` are not
        applied and answer `status` (with `hang`, only once the outage is over)."""
        return self.core.faults.outage(route, seconds, status, hang)
