"""Memory after many runs stays flat: the Bridge's run buffers and the runtime's live runs.

    .venv/bin/python -m bench.memory [--runs 1000] [--events 500] [--database sqlite://...]

Two parts, each measured with tracemalloc (Python allocations still held, not RSS):
  bridge   RunRegistry as the Bridge keeps it (BRIDGE_RUN_BUFFER_BYTES): one live run of N
           events stays within its buffer, and each of the runs, once ended, keeps at most
           its last 8 KiB for the retention;
  runtime  RunPool on a loopback Bridge (bench/loopback_bridge.py) and a fresh database: the
           runs stream N events each, ten at a time, finished runs are pruned as the upkeep job
           does (the pool's clock moved past FINISHED_TTL); what the process holds after the
           last run is compared with what it held after the first tenth.
It exits 1 if a bound is exceeded: the live run past its buffer, an ended run past 16 KiB, or
the runtime holding more than 4 MiB more after all runs than after the first tenth.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import tempfile
import tracemalloc
from pathlib import Path

from bench.loopback_bridge import LoopbackBridge
from bridge.run_registry import RunRegistry
from core.agent.bridge.client import BridgeClient
from core.agent.catalogue import Catalogue
from core.chat import sessions
from core.runtime.pool import FINISHED_TTL, RunPool
from core.store import db
from core.store.models import MessageStatus

BUFFER_BYTES = 1048576  # BRIDGE_RUN_BUFFER_BYTES's default
ENDED_LIMIT = 16384
RUNTIME_GROWTH_LIMIT = 4 * 1048576
TEXT = "x" * 100


def held() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def bridge_part(runs: int, events: int) -> list[str]:
    """The bound of a live run's buffer and what ended runs keep; failures, if any."""
    registry = RunRegistry(90000.0, lambda: 0.0, BUFFER_BYTES)
    base = held()
    live = registry.create("live", "s")
    for _ in range(events * 40):  # well past the buffer: 20,000 events of ~150 bytes
        live.append("text", {"text": TEXT})
    live_bytes = held() - base
    print(f"bridge: one live run of {events * 40:,} events holds {live_bytes / 1024:,.0f} KiB "
          f"(buffer {BUFFER_BYTES / 1024:,.0f} KiB, {live.kept_bytes / 1024:,.0f} KiB of frames)")
    before = held()
    for number in range(runs):
        log = registry.create(f"run-{number}", "s")
        for _ in range(events - 1):
            log.append("text", {"text": TEXT})
        log.append("done", {"final_text": "end"})
    per_run = (held() - before) / runs
    print(f"bridge: {runs:,} ended runs of {events} events hold {per_run / 1024:.1f} KiB each "
          f"for the retention")
    failures = []
    if live_bytes > BUFFER_BYTES * 2:  # frames plus their Python objects
        failures.append(f"a live run holds {live_bytes} bytes, buffer {BUFFER_BYTES}")
    if per_run > ENDED_LIMIT:
        failures.append(f"an ended run holds {per_run:.0f} bytes, limit {ENDED_LIMIT}")
    return failures


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def runtime_part(runs: int, events: int, database: str) -> list[str]:
    await db.migrate(database)
    await db.open_database(database)
    clock = Clock()
    try:
        async with LoopbackBridge(events - 1) as bridge, BridgeClient(bridge.url) as client:
            pool = RunPool(client, Catalogue((), Path(".")), max_active_runs=10, monotonic=clock)
            await pool.open()
            try:
                tenth = runs // 10
                await _runs(pool, clock, tenth)
                after_tenth = held()
                await _runs(pool, clock, runs - tenth)
                after_all = held()
            finally:
                await pool.close()
    finally:
        await db.close_database()
    growth = after_all - after_tenth
    print(f"runtime: {runs:,} runs of {events} events: {after_tenth / 1048576:.1f} MiB held "
          f"after {tenth:,}, {after_all / 1048576:.1f} MiB after all "
          f"({growth / 1024:+,.0f} KiB, {growth / max(1, runs - tenth):+,.0f} bytes a run)")
    if growth > RUNTIME_GROWTH_LIMIT:
        return [f"the runtime grew {growth} bytes over {runs - tenth} runs"]
    return []


async def _runs(pool: RunPool, clock: Clock, count: int) -> None:
    for start in range(0, count, 10):
        batch = await asyncio.gather(*(_one(pool) for _ in range(min(10, count - start))))
        assert all(status == MessageStatus.SUCCESS for status, _ in batch), batch
        tasks = [task for _, task in batch if task is not None]
        await asyncio.gather(*tasks)  # their leases released: nothing of theirs is left to do
        clock.now += FINISHED_TTL + 1
        pool.prune()


async def _one(pool: RunPool) -> tuple[MessageStatus, asyncio.Task[None] | None]:
    session = await sessions.create_session()
    run = await pool.start(session.id, "go")
    subscription = pool.subscribe(run.run_id)
    live = pool.live(run.run_id)
    try:
        while True:
            for update in await subscription.next():
                if update.finished:
                    return update.status, live.task if live else None
    finally:
        pool.unsubscribe(subscription)


async def main(runs: int, events: int, database: str | None) -> int:
    tracemalloc.start()
    failures = bridge_part(runs, events)
    with tempfile.TemporaryDirectory() as folder:
        url = database or f"sqlite://{folder}/bench.sqlite3"
        failures += await runtime_part(runs, events, url)
    for failure in failures:
        print(f"FAILED: {failure}")
    print("memory stays flat" if not failures else "memory is not bounded")
    return 1 if failures else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--events", type=int, default=500)
    parser.add_argument("--database", default=None)
    args = parser.parse_args()
    sys.exit(asyncio.run(main(args.runs, args.events, args.database)))
