"""The gateway shards this replica connects: one discord.py client per shard it holds.

discord.py's AutoShardedClient launches its shards once, at connect; it has no public way to
add a shard later or to drop one for good, and a claim changes at runtime (a dead replica's
shard is taken over, a lapsed one is let go). So each shard is a client of its own
(`shard_id`, `shard_count`), logged in and kept connected by its own `GatewaySupervisor`, and
`ShardFleet` opens and closes them as the claims (core/runtime/shards.py) say. Every shard
client hangs on the same services as the adapter's main client (which writes by REST and
follows the runs, and has no cache: a channel it needs is looked up in the shards' caches,
`cached_channel`); a shard client drops every dispatch while this replica does not hold its
shard (`gate_parsers`), so a shard whose lease lapsed is handled nowhere until it is taken
over. Opening is one shard at a time, each until its READY, as Discord's IDENTIFY budget
(`max_concurrency` 1) asks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass

import discord

from bots.discord.supervisor import GatewaySupervisor, gate_parsers
from core.conversation.vocabulary import Shards
from core.edge.platform_links import PlatformLink

log = logging.getLogger(__name__)
READY_SECONDS = 30.0  # how long one shard may take to be ready before the next is opened


@dataclass
class ShardConnection:
    client: discord.Client
    supervisor: GatewaySupervisor
    task: asyncio.Task[None]


class ShardFleet:
    """Keeps one client per shard `claims` holds: `run()` until `stop()`."""

    def __init__(self, claims: Shards, make_client: Callable[[int, int], discord.Client],
                 make_supervisor: Callable[[discord.Client], GatewaySupervisor],
                 token: str, link: PlatformLink) -> None:
        self.claims = claims
        self._make_client = make_client
        self._make_supervisor = make_supervisor
        self._token = token
        self._link = link
        self._open: dict[int, ShardConnection] = {}
        self._stopping = asyncio.Event()
        self.stepped = asyncio.Event()  # set once the first claims are made and opened
        self._steps = 0
        self._opening: dict[int, asyncio.Task[None]] = {}
        self._identify = asyncio.Lock()  # one IDENTIFY at a time, each until READY

    @property
    def connected(self) -> frozenset[int]:
        """The shards with a client open here."""
        return frozenset(self._open)

    def cached_channel(self, channel_id: int) -> object | None:
        """The channel as an open shard's cache has it (None: no shard held here has it)."""
        for connection in self._open.values():
            channel = connection.client.get_channel(channel_id)
            if channel is not None:
                return channel
        return None

    async def run(self) -> None:
        try:
            wait = self.claims.first_wait
            while not self._stopping.is_set():
                await self.step()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), wait)
                wait = self.claims.every
            await self._reap_ended()  # a shard that failed for good while opening says why
        finally:
            await self._close_all()

    async def step(self) -> None:
        """Renew and claim, then close the shards no longer held and start opening the new
        ones (in the background, one at a time: renewing must not wait for a READY)."""
        try:
            held = await self.claims.step()
        except Exception as error:  # the database is away: what is held lapses by itself
            log.warning("discord: could not renew the shard claims (%s); will retry", error)
            held = self.claims.held
        await self._reap_ended()
        for shard in sorted(self.connected - held):
            log.warning("discord: shard %d is no longer this replica's; disconnecting it", shard)
            await self._close(shard)
        for shard in sorted(held - self.connected - set(self._opening)):
            task = asyncio.create_task(self._connect(shard), name=f"discord-open-shard-{shard}")
            self._opening[shard] = task
        if not held and self._steps:
            self._link.connected()  # standing by: other replicas hold every shard
        self._steps += 1
        self._check_ready()

    def _check_ready(self) -> None:
        """`stepped` once the first claims are made and every shard held is open (the first
        step of ShardClaims only says hello)."""
        failed = any(self._ended_in_error(shard) for shard in self._open)
        if (self._steps > 1 or self.claims.held) and not self._opening and not failed:
            self.stepped.set()

    def stop(self) -> None:
        self._stopping.set()

    async def release(self) -> None:
        """After `run` ended: other replicas may take this one's shards at once."""
        try:
            await self.claims.release()
        except Exception as error:
            log.warning("discord: could not release the shard claims (%s); they lapse", error)

    async def _connect(self, shard: int) -> None:
        try:
            async with self._identify:
                if self.claims.holds(shard) and not self._stopping.is_set():
                    await self._open_client(shard)
                    if self._ended_in_error(shard):
                        self.stop()  # `run` raises why; the other shards close with it
        finally:
            self._opening.pop(shard, None)
            self._check_ready()

    def _ended_in_error(self, shard: int) -> bool:
        connection = self._open.get(shard)
        task = connection.task if connection is not None else None
        return task is not None and task.done() and not task.cancelled() \
            and task.exception() is not None

    async def _open_client(self, shard: int) -> None:
        client = self._make_client(shard, self.claims.count)
        supervisor = self._make_supervisor(client)  # guards the parsers; the gate goes outside
        gate_parsers(client, lambda: self.claims.holds(shard))
        try:
            await client.login(self._token)
        except Exception as error:
            log.warning("discord: shard %d could not log in (%s); will retry", shard, error)
            await client.close()
            return
        task = asyncio.create_task(supervisor.run(), name=f"discord-shard-{shard}")
        self._open[shard] = ShardConnection(client, supervisor, task)
        log.info("discord: connecting shard %d of %d", shard, self.claims.count)
        ready = asyncio.ensure_future(client.wait_until_ready())
        stopping = asyncio.ensure_future(self._stopping.wait())
        await asyncio.wait({ready, stopping, task}, timeout=READY_SECONDS,
                           return_when=asyncio.FIRST_COMPLETED)
        ready.cancel()
        stopping.cancel()

    async def _reap_ended(self) -> None:
        """A shard's supervisor stopped for good (a refused token, a bad shard, intents not
        enabled): what it raised ends the fleet, as it ends an unsharded gateway. One that
        ended quietly (its client closed) is dropped, to be opened again while held."""
        for shard, connection in list(self._open.items()):
            if not connection.task.done():
                continue
            if not connection.task.cancelled() and (error := connection.task.exception()):
                raise error
            log.warning("discord: shard %d's connection ended; opening it again", shard)
            await self._close(shard)

    async def _close(self, shard: int) -> None:
        connection = self._open.pop(shard)
        connection.supervisor.stop()
        await connection.client.close()
        with contextlib.suppress(Exception):
            await connection.task

    async def _close_all(self) -> None:
        opening = list(self._opening.values())
        for task in opening:
            task.cancel()
        await asyncio.gather(*opening, return_exceptions=True)
        for shard in sorted(self._open):
            await self._close(shard)
