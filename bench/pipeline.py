"""Events/s through the whole run pipeline, beside its ceiling and the naive baseline.

    .venv/bin/python -m bench.pipeline [--events 20000] [--rounds 3] [--database postgres://...]

Every round streams the same N events from a minimal Bridge on loopback (bench/loopback_bridge.py,
so neither the agent's speed nor a test fake's is measured) four ways, side by side:
  ceiling   parse each event and drop it (the Bridge client alone);
  pipeline  RunPool: batched log rows (a binary COPY per flush: 50 rows / 200 ms, or whatever
            arrived while the previous flush was written), the thinking reducer, and a
            subscriber that reads every update;
  naive     parse, then one INSERT per event;
  storage   no stream at all: the same rows written the pipeline's way, in one flush:
            what the database on this machine takes, for context.
A first round is run and not counted (one-time costs of a fresh process). It prints each
figure per round and the medians' ratios; the machine's pace drifts between
rounds, so pipeline / ceiling is taken within each round (the ceiling measured right before and
right after the pipeline) and its median printed. The database is a fresh PostgreSQL
database (dropped afterwards) unless --database names another.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid
from datetime import datetime, UTC
from pathlib import Path

import asyncpg

from core.store import db
from core.chat import sessions
from core.agent.bridge.client import BridgeClient
from core.agent.bridge.types import RunRequest
from core.agent.catalogue import Catalogue
from core.agent.events import event_to_log
from core.store.models import ChatMessageLog, MessageStatus
from core.runtime.pool import RunPool
from core.runtime.log_buffer import Row, insert_rows
from core.runtime.records import insert_turn
from bench.loopback_bridge import LoopbackBridge

ADMIN_URL = "postgres://postgres@127.0.0.1:5432/postgres"


async def ceiling(client: BridgeClient, count: int) -> float:
    started = time.perf_counter()
    seen = 0
    request = RunRequest(run_id=uuid.uuid4().hex, session_id="chat-bench", user_message="go")
    async for _ in client.stream(request):
        seen += 1
    assert seen == count + 1
    return seen / (time.perf_counter() - started)


async def pipeline(client: BridgeClient, count: int) -> float:
    pool = RunPool(client, Catalogue((), Path(".")))
    await pool.open()
    session = await sessions.create_session()
    started = time.perf_counter()
    run = await pool.start(session.id, "go")
    async for update in pool.subscribe(run.run_id):
        if update.finished:
            break
    elapsed = time.perf_counter() - started
    await pool.close()
    assert update.status == MessageStatus.SUCCESS
    assert await ChatMessageLog.filter(message_id=run.message_id).count() == count + 1
    return (count + 1) / elapsed


async def naive(client: BridgeClient, count: int) -> float:
    session = await sessions.create_session()
    started = time.perf_counter()
    turn = await insert_turn(session.id, uuid.uuid4().hex, MessageStatus.RUNNING, text="go")
    request = RunRequest(run_id=uuid.uuid4().hex, session_id="chat-bench", user_message="go")
    async for event in client.stream(request):
        row = event_to_log(event)
        await ChatMessageLog.create(message_id=turn.assistant.id, seq=row.seq, kind=row.kind,
                                    content=row.content, tool_name=row.tool_name,
                                    meta_json=row.meta_json, created_at=row.created_at)
    return (count + 1) / (time.perf_counter() - started)


async def storage(client: BridgeClient, count: int) -> float:
    session = await sessions.create_session()
    turn = await insert_turn(session.id, uuid.uuid4().hex, MessageStatus.RUNNING, text="go")
    at = datetime.now(UTC)
    rows: list[Row] = [(turn.assistant.id, i, "text", f"token{i} ", None, None, at) for i in range(1, count + 2)]
    started = time.perf_counter()
    await insert_rows(rows)
    return len(rows) / (time.perf_counter() - started)


async def main(events: int, rounds: int, database: str | None) -> None:
    name = f"hermes_chat_bench_{uuid.uuid4().hex[:8]}"
    admin = None
    if database is None:
        admin = await asyncpg.connect(ADMIN_URL)
        await admin.execute(f'CREATE DATABASE "{name}"')
        database = ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    try:
        await db.migrate(database)
        await db.open_database(database)
        await run_rounds(events, rounds)
        await db.close_database()
    finally:
        if admin is not None:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            await admin.close()


async def run_rounds(events: int, rounds: int) -> None:
    figures: dict[str, list[float]] = {"ceiling": [], "pipeline": [], "naive": [], "storage": []}
    paired: list[float] = []  # each round's pipeline over the ceilings measured either side of it
    async with LoopbackBridge(events) as bridge:
        async with BridgeClient(bridge.url) as client:
            # One round not counted: a process's first pays one-time costs (connections,
            # prepared statements, caches) that no later run sees.
            await ceiling(client, events)
            await pipeline(client, events)
            for round_no in range(1, rounds + 1):
                before = await ceiling(client, events)
                piped = await pipeline(client, events)
                after = await ceiling(client, events)
                figures["ceiling"].append((before + after) / 2)
                figures["pipeline"].append(piped)
                paired.append(piped / figures["ceiling"][-1])
                figures["naive"].append(await naive(client, events))
                figures["storage"].append(await storage(client, events))
                print(f"round {round_no}: " + "  ".join(
                    f"{k} {v[-1]:,.0f} ev/s" for k, v in figures.items())
                    + f"  (pipeline / ceiling {paired[-1]:.2f})", flush=True)
    medians = {k: statistics.median(v) for k, v in figures.items()}
    print(f"\nmedians over {rounds} rounds of {events:,} events (PostgreSQL, loopback Bridge):")
    for label, value in medians.items():
        print(f"  {label:9} {value:>10,.0f} events/s")
    print(f"  pipeline / ceiling = {statistics.median(paired):.2f}  (target >= 0.5; the median "
          "of each round's ratio to the ceilings measured just before and after it)")
    print(f"  pipeline / naive   = {medians['pipeline'] / medians['naive']:.1f}  (target >= 10)")
    print(f"  pipeline / storage = {medians['pipeline'] / medians['storage']:.2f}  "
          "(the database's own pace bounds the pipeline)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--database", default=None)
    args = parser.parse_args()
    asyncio.run(main(args.events, args.rounds, args.database))
