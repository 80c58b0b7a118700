"""One scheduler among replicas: the advisory lock on PostgreSQL, a refusal on SQLite; the
leader's jobs handed over within a lease when it dies."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path

import asyncpg
import pytest
from tortoise import connections

from core.chat import sessions
from core.errors import Conflict
from core.runtime import records
from core.runtime.jobs import start_jobs
from core.runtime.singleton import SchedulerLock, Upkeep
from core.store.db import asyncpg_dsn, is_sqlite
from core.store.models import ClarifyPause, MessageStatus, PauseStatus, utc_now
from tests.conftest import BACKEND
from tests.fakes.fake_bridge import FakeBridge
from tests.support.runtime import catalogue_for, opened_pool


async def test_only_one_replica_holds_the_scheduler_lock(db: str) -> None:
    first, second = SchedulerLock(db), SchedulerLock(db)
    assert await first.try_acquire()
    if is_sqlite(db):
        with pytest.raises(Conflict, match="SQLite runs one replica only"):
            await second.try_acquire()
    else:
        assert not await second.try_acquire()
    await first.release()  # the holder goes away ...
    assert await second.try_acquire()  # ... and the other one takes over
    await second.release()


LEASE = 2.0  # seconds; the upkeep tries the lock every half lease


async def _ancient_pause(clarify_id: str) -> None:
    """An unanswered question older than the retention: the next upkeep run expires it."""
    session = (await sessions.create_session()).id
    turn = await records.insert_turn(session, f"run-{clarify_id}", MessageStatus.RUNNING, text="?")
    await ClarifyPause.create(run_id=f"run-{clarify_id}", message_id=turn.assistant.id,
                              clarify_id=clarify_id, question="?",
                              created_at=utc_now() - timedelta(days=31))


async def _expired(clarify_id: str) -> bool:
    return await ClarifyPause.filter(clarify_id=clarify_id, status=PauseStatus.EXPIRED).exists()


async def _until(check: Callable[[], Awaitable[bool]], what: str, deadline: float) -> float:
    """Seconds until `check()` held; fails past the deadline (polling, no sleeping it out)."""
    start = time.monotonic()
    while not await check():
        assert time.monotonic() - start < deadline, f"not within {deadline} s: {what}"
        await asyncio.sleep(0.02)
    return time.monotonic() - start


@pytest.mark.skipif(BACKEND != "postgres", reason="SQLite runs one replica only, by design")
async def test_the_leaders_death_hands_the_jobs_to_another_replica_within_a_lease(
    db: str, fake_bridge: FakeBridge, skills_dir: Path
) -> None:
    async with opened_pool(fake_bridge.url, catalogue_for(None, skills_dir)) as pool:
        upkeeps = [Upkeep(SchedulerLock(db, LEASE), lambda: start_jobs(pool), every=LEASE / 2)
                   for _ in range(2)]
        await _ancient_pause("first")
        await upkeeps[0].step()  # the first replica to start leads
        tasks = [asyncio.create_task(upkeep.run()) for upkeep in upkeeps]
        try:
            await _until(lambda: _async(upkeeps[0].leading), "the first replica leads", LEASE)
            await _until(lambda: _expired("first"), "the leader's jobs ran at its start", LEASE)
            assert not upkeeps[1].leading

            # The leader's lock connection drops while it lives (the server restarted it, the
            # network broke): it stops its jobs at its next check, and one replica leads again.
            # The other may take the freed lock before that check: two lead at once for less
            # than one check of the lock (singleton.py's promise), never longer.
            await _ancient_pause("second")  # the leader's next run of that job is an hour away
            assert await _drop_lock_connection(db)
            overlap = Overlap()
            dropped = await _until(lambda: _one_leader(upkeeps, overlap),
                                   "one leader again after the drop", LEASE)
            assert overlap.longest < upkeeps[0].every + LEASE / 4, overlap.longest
            await _until(lambda: _expired("second"), "the jobs ran again", LEASE)

            # The leader dies (its process gone: its loop ends, its connection closes); the
            # other replica takes the jobs over within a lease and runs them at once.
            dead = 0 if upkeeps[0].leading else 1
            other = upkeeps[1 - dead]
            tasks[dead].cancel()
            await asyncio.gather(tasks[dead], return_exceptions=True)
            await _ancient_pause("third")
            assert await _drop_lock_connection(db)
            handover = await _until(lambda: _async(other.leading), "the other replica leads",
                                    LEASE)
            ran = await _until(lambda: _expired("third"), "the new leader ran the jobs", LEASE)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for upkeep in upkeeps:
                await upkeep.lock.release()
    print(f"one leader again {dropped:.2f} s after the lock connection dropped (two at once "
          f"for {overlap.longest:.2f} s); the jobs handed "
          f"over {handover:.2f} s after the leader died, run {ran:.2f} s later")
    assert handover < LEASE
    assert not any(upkeep.leading for upkeep in upkeeps)  # cancelled: jobs stopped


_OUR_LOCK = ("locktype = 'advisory' AND granted AND database = "
             "(SELECT oid FROM pg_database WHERE datname = current_database())")


class Overlap:
    """The longest time two replicas were seen leading at once (by the polls of `_one_leader`)."""

    def __init__(self) -> None:
        self.since: float | None = None
        self.longest = 0.0

    def seen(self, leading: int) -> None:
        now = time.monotonic()
        if leading > 1:
            self.since = now if self.since is None else self.since
            self.longest = max(self.longest, now - self.since)
        else:
            self.since = None


async def _one_leader(upkeeps: list[Upkeep], overlap: Overlap) -> bool:
    """Exactly one leads, and the lock is held once (two leading at once is timed)."""
    leading = sum(upkeep.leading for upkeep in upkeeps)
    overlap.seen(leading)
    return leading == 1 and len(await connections.get("default").execute_query_dict(
        f"SELECT pid FROM pg_locks WHERE {_OUR_LOCK}")) == 1


async def _drop_lock_connection(db: str) -> bool:
    """The server ends the backend holding the scheduler lock (as when its client vanished)."""
    admin = await asyncpg.connect(asyncpg_dsn(db))
    try:
        return bool(await admin.fetchval(
            f"SELECT bool_and(pg_terminate_backend(pid)) FROM pg_locks WHERE {_OUR_LOCK}"))
    finally:
        await admin.close()


async def test_a_lone_replica_runs_the_jobs_at_once_and_keeps_its_lock(
    db: str, fake_bridge: FakeBridge, skills_dir: Path
) -> None:
    async with opened_pool(fake_bridge.url, catalogue_for(None, skills_dir)) as pool:
        upkeep = Upkeep(SchedulerLock(db, LEASE), lambda: start_jobs(pool), every=LEASE / 2)
        await _ancient_pause("old")
        await upkeep.step()
        try:
            assert upkeep.leading
            await _until(lambda: _expired("old"), "the jobs ran at the start", LEASE)
            await upkeep.step()  # the lock checked again: still held, the jobs go on
            assert upkeep.leading
        finally:
            await upkeep.lock.release()
            await upkeep.step()
            assert upkeep.leading  # a free lock is taken again (the next start)
            await upkeep.lock.release()


async def _async(value: bool) -> bool:
    return value
