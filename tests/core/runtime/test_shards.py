"""Gateway shard claims on one database (core/runtime/shards.py): replicas started together
split the shards; one that cannot renew stops counting a shard its own before its lease ends,
and nobody takes a live claim; a lapsed one is taken over; a replica configured for another
shard count claims nothing while claims of the old count live."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest

from core.runtime.shards import USABLE, AllShards, ShardClaims, claims_for
from core.store.models import DiscordShardClaim, utc_now

TTL = timedelta(seconds=4)


class Clocks:
    """A replica's wall clock (leases in the table) and its own monotonic clock (`holds`)."""

    def __init__(self) -> None:
        self.offset = timedelta(0)
        self.now = 100.0

    def wall(self):
        return utc_now() + self.offset

    def monotonic(self) -> float:
        return self.now


def replica(count: int, clocks: Clocks) -> ShardClaims:
    return ShardClaims(count, ttl=TTL, clock=clocks.wall, monotonic=clocks.monotonic)


async def test_replicas_split_the_shards_and_a_lapsed_claim_is_taken_over(
    db: str, caplog: pytest.LogCaptureFixture
) -> None:
    ca, cb = Clocks(), Clocks()
    a, b = replica(2, ca), replica(2, cb)
    assert await a.step() == frozenset() and await b.step() == frozenset()  # hello first
    assert await a.step() == {0} and await b.step() == {1}  # two replicas: one shard each

    ca.now += TTL.total_seconds() * USABLE  # A cannot renew (its database is away, say)
    assert not a.holds(0) and a.held == frozenset()  # it stops handling shard 0 now...
    assert await b.step() == {1}  # ...a quarter lease before its claim ends: B leaves it

    cb.offset = TTL + timedelta(seconds=1)  # on B's clock, A's claim (and presence) lapsed
    assert await b.step() == {0, 1}
    caplog.set_level(logging.WARNING, logger="core.runtime.shards")
    assert await a.step() == frozenset()  # A is back: shard 0 is B's now
    assert "another replica took Discord shard 0 over" in caplog.text

    await b.release()
    assert await DiscordShardClaim.all().count() == 0


async def test_a_replica_of_another_shard_count_waits_for_the_old_claims(db: str) -> None:
    clocks = Clocks()
    old, new = replica(2, clocks), replica(3, clocks)
    await old.step(), await new.step()
    assert await old.step() == {0}  # share of two replicas
    assert await new.step() == frozenset()  # count 3 would split count 2's guilds
    await old.release()
    assert await new.step() == {0, 1, 2}


def test_sqlite_has_no_claims_and_one_replica_holds_every_shard() -> None:
    assert claims_for("sqlite://data/x.sqlite3", 30) is None
    make = claims_for("postgres://u@h/db", 30)
    assert make is not None and isinstance(make(2), ShardClaims)
    assert AllShards(3).held == {0, 1, 2} and not AllShards(3).holds(3)
