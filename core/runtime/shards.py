"""Gateway shards across replicas: each shard of Discord's gateway is connected by one replica
at a time, so each of its events is handled once.

A replica claims shards in `discord_shard_claim` with the lease rule of core/runtime/leases.py
(one conditional update: free, expired, or already ours) and renews them every quarter of a
lease. It counts a shard as its own only until three quarters of the lease it last renewed
have passed on its own clock (`holds`), measured from before the renewal was sent: a replica
that cannot renew (the database is away, another replica took the row) stops handling that
shard's events and disconnects it a quarter of a lease before anyone else may take it, so two
replicas never handle one shard at once (given clocks that agree to within that quarter).

Fairness: every replica with Discord up keeps a lease of its own in `discord_replica` (the
same rule), and claims free shards up to its share: the shard count divided by the live
replicas, rounded up. Its first step only says it is there; it claims from the next one on, so
replicas started together see each other and split the shards. Shards held are not moved to a
replica that starts later (a handover would lose the events between one replica's disconnect
and the other's IDENTIFY, which Discord does not replay): it stands by, and takes over the
shards of one that stops (it releases them) or dies (its leases lapse).
Every claim row carries the shard count: a replica configured for another count claims
nothing while claims of that count are live, so two counts never split one guild.
On SQLite there is one replica: `AllShards` holds every shard, without a table.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from datetime import datetime, timedelta

from core.runtime.leases import LeaseRows
from core.store.db import is_sqlite
from core.store.models import DiscordReplica, DiscordShardClaim, utc_now

log = logging.getLogger(__name__)
USABLE = 0.75  # of a lease: how long after a renewal this replica still counts a shard its own
EVERY = 0.25  # of a lease: how often claims are renewed and free shards looked for
FIRST_WAIT = 2.0  # seconds at most between a replica's first step (presence) and its first claim


class ShardClaims:
    """The shards of `count` this replica (`owner`) holds; `await step()` every `every` seconds."""

    def __init__(self, count: int, owner: str | None = None,
                 ttl: timedelta = timedelta(seconds=30),
                 clock: Callable[[], datetime] = utc_now,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        if count < 1:
            raise ValueError(f"a gateway has at least one shard, not {count}")
        self.count = count
        self.rows = LeaseRows(DiscordShardClaim, "shard_id", owner, ttl, clock)
        self.presence = LeaseRows(DiscordReplica, "owner", self.rows.owner, ttl, clock)
        self._clock = clock
        self._monotonic = monotonic
        self._present = False
        self._until: dict[int, float] = {}
        self._blocked_by: int | None = None

    @property
    def owner(self) -> str:
        return self.rows.owner

    @property
    def every(self) -> float:
        return self.rows.ttl.total_seconds() * EVERY

    @property
    def first_wait(self) -> float:
        """After the first step (presence only), how long until the next (the first claims)."""
        return min(self.every, FIRST_WAIT)

    def holds(self, shard: int) -> bool:
        """Whether this replica may handle the shard's events now (its own clock only)."""
        return self._monotonic() < self._until.get(shard, -math.inf)

    @property
    def held(self) -> frozenset[int]:
        return frozenset(s for s in self._until if self.holds(s))

    async def step(self) -> frozenset[int]:
        """Renew the shards held, claim free ones up to this replica's share; the shards held
        now. A database error raises: the shards held lapse by themselves."""
        started = self._monotonic()
        until = started + self.rows.ttl.total_seconds() * USABLE
        await self.presence.claim(self.owner)
        if not self._present:
            self._present = True
            return self.held  # the others see this replica before it claims
        mine: set[int] = set()
        for shard in sorted(self._until):
            if await self.rows.renew([shard]):
                mine.add(shard)
            else:
                log.warning("runtime: another replica took Discord shard %d over", shard)
        self._until = {s: t for s, t in self._until.items() if s in mine}
        for shard in mine:
            self._until[shard] = until
        for shard in await self._free_share(len(mine)):
            if await self.rows.claim(shard, shard_count=self.count):
                self._until[shard] = until
        return self.held

    async def _free_share(self, holding: int) -> list[int]:
        """The free shards this replica should try to claim, lowest first."""
        others = await self.rows.live_others()
        counts = {int(row["shard_count"]) for row in others} - {self.count}
        if counts:
            if self._blocked_by != min(counts):
                log.warning("runtime: replicas with DISCORD_SHARD_COUNT=%d hold Discord shards; "
                            "this one (count %d) claims none until theirs lapse",
                            min(counts), self.count)
            self._blocked_by = min(counts)
            return []
        self._blocked_by = None
        now = self._clock()
        await DiscordReplica.filter(expires_at__lt=now - self.rows.ttl).delete()  # long gone
        replicas = await DiscordReplica.filter(expires_at__gte=now).count()
        share = math.ceil(self.count / max(1, replicas)) - holding
        taken = {int(row["shard_id"]) for row in others} | set(self._until)
        return [s for s in range(self.count) if s not in taken][:max(0, share)]

    async def release(self) -> None:
        """Let other replicas take this one's shards at once (a clean stop)."""
        shards, self._until = list(self._until), {}
        await self.rows.release(shards)
        await self.presence.release([self.owner])


class AllShards:
    """SQLite's one replica: every shard is its own, always."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.every = 3600.0
        self.first_wait = 0.0

    def holds(self, shard: int) -> bool:
        return 0 <= shard < self.count

    @property
    def held(self) -> frozenset[int]:
        return frozenset(range(self.count))

    async def step(self) -> frozenset[int]:
        return self.held

    async def release(self) -> None:
        return None


Shards = ShardClaims | AllShards


def claims_for(database_url: str, lease_seconds: float) -> Callable[[int], Shards] | None:
    """PostgreSQL: claims in the database, so several replicas share the shards. SQLite: None
    (one replica; the adapter connects every shard itself)."""
    if is_sqlite(database_url):
        return None
    ttl = timedelta(seconds=lease_seconds)
    return lambda count: ShardClaims(count, ttl=ttl)
