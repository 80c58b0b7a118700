"""Admin API and console on a large PostgreSQL database: list pages, exports, usage reports
and the console's pages, over real HTTP.

    .venv/bin/python -m bench.admin [--sessions 100000] [--messages 10000] [--pages 200]
                                    [--calls 1000000] [--reports 30]

Fills a fresh database (dropped afterwards) with `--sessions` sessions of two messages each
(one answer in 100 rated) and one session of `--messages` messages, and `--calls` recorded model calls (90 days, 1,000
people in 5 workspaces of 10 channels, 4 models, 1 % operators' runs; their day's sums as the
ledger keeps them), serves the real admin app with uvicorn on loopback, and prints, beside the
row counts: list-page latency p50/p99 (newest first, then paging deeper by cursor), one text
search, the time to stream the big session's export, and `GET /api/usage` p50/p99 by each
`by`, over every day and over one month (`--reports` requests each). The console is
served with the app (open on loopback, as without ADMIN_TOKEN); each console page's time
p50/p99 (`--pages` requests each; rendered in full by the server: its server time plus a
loopback round trip).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import random
import statistics
import time
import uuid
from datetime import datetime, timedelta, UTC
from pathlib import Path

import asyncpg
import httpx
import uvicorn

from admin.app import create_app
from admin.services import AdminServices
from console.plugin import ConsolePlugin
from core.store import db
from core.agent.bridge.client import BridgeClient
from core.agent.catalogue import Catalogue
from core.config import Settings
from core.runtime.pool import RunPool

ADMIN_URL = "postgres://postgres@127.0.0.1:5432/postgres"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


async def fill(url: str, sessions: int, messages: int) -> None:
    """Rows written with COPY: the point is reading them, not writing them."""
    conn = await asyncpg.connect("postgresql://" + url.split("://", 1)[1])
    rows = [(i, str(uuid.uuid4()), f"session {i}", f"chat-{i}", "ACTIVE", T0, T0 + timedelta(seconds=i), T0)
            for i in range(1, sessions + 2)]
    await conn.copy_records_to_table("chat_session", records=rows, columns=[
        "id", "uuid", "title", "hermes_session", "status", "created_at", "last_message_at",
        "updated_at"])
    pairs: list[tuple[int, int, int | None, str, str, str]] = []
    for i in range(1, sessions + 1):
        pairs.append((2 * i - 1, i, None, "USER", f"question {i} about invoices", "SENT"))
        pairs.append((2 * i, i, 2 * i - 1, "ASSISTANT", f"answer {i}", "SUCCESS"))
    big = sessions + 1
    first = 2 * sessions + 1
    pairs += [(first + k, big, first + k - 1 if k else None, "USER" if k % 2 == 0 else "ASSISTANT",
               f"long conversation message {k} " + "lorem ipsum " * 20,
               "SENT" if k % 2 == 0 else "SUCCESS") for k in range(messages)]
    await conn.copy_records_to_table("chat_message", records=[
        (*p, True, 0, T0) for p in pairs], columns=[
        "id", "session_id", "parent_id", "role", "content", "status", "is_active", "branch_order",
        "created_at"])
    # One answer in 100 rated, half of them 👎 (what the console's Feedback page lists).
    await conn.copy_records_to_table("answer_feedback", records=[
        (2 * i, "slack", f"U{i % 1000}", "bad" if i % 200 == 1 else "good", T0 + timedelta(seconds=i))
        for i in range(1, sessions + 1, 100)], columns=["message_id", "platform", "user", "value", "at"])
    for table in ("chat_session", "chat_message"):
        await conn.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                           f"(SELECT max(id) FROM {table}))")
    await conn.execute("ANALYZE")
    await conn.close()


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def measure(base: str, pages: int, big: int) -> None:
    needle = f"question {big // 2} about"
    async with httpx.AsyncClient(base_url=base, timeout=120) as client:
        first, deep, cursor = [], [], None
        for _ in range(pages):
            started = time.perf_counter()
            page = (await client.get("/api/chat/sessions", params={"limit": 50})).json()
            first.append(time.perf_counter() - started)
        for _ in range(pages):
            params = {"limit": 50, **({"cursor": cursor} if cursor else {})}
            started = time.perf_counter()
            page = (await client.get("/api/chat/sessions", params=params)).json()
            deep.append(time.perf_counter() - started)
            cursor = page["nextCursor"]
        started = time.perf_counter()
        found = (await client.get("/api/chat/sessions", params={"q": needle})).json()
        search = time.perf_counter() - started
        exports = {}
        for fmt in ("md", "json"):
            started = time.perf_counter()
            async with client.stream("GET", f"/api/chat/sessions/{big}/export",
                                     params={"format": fmt, "branch": "active"}) as response:
                size = sum([len(chunk) async for chunk in response.aiter_bytes()])
            exports[fmt] = (time.perf_counter() - started, size)
    print(f"list, first page (limit 50):   p50 {statistics.median(first) * 1000:7.1f} ms"
          f"   p99 {percentile(first, 0.99) * 1000:7.1f} ms   ({pages} requests)")
    print(f"list, paging deeper by cursor: p50 {statistics.median(deep) * 1000:7.1f} ms"
          f"   p99 {percentile(deep, 0.99) * 1000:7.1f} ms   ({pages} pages of 50)")
    print(f"list, text search q={needle!r}: {search * 1000:7.1f} ms ({len(found['items'])} found)")
    for fmt, (seconds, size) in exports.items():
        print(f"export {fmt:4} of the big session: {seconds * 1000:7.1f} ms, {size / 1e6:.1f} MB")


USAGE_DAYS = 90
MODELS = (("small", 0.15, 0.6), ("large", 2.5, 10.0), ("local", None, None), ("code", 1.0, 4.0))
WORKSPACES = (("slack", "T0"), ("slack", "T1"), ("slack", "T2"), ("discord", "G0"),
              ("discord", "G1"))
ROLLUPS = {"user": ('"user"', "''"), "channel": ("channel", "workspace"),
           "workspace": ("workspace", "''"), "model": ("model", "''")}


def usage_calls(count: int) -> list[tuple]:
    """`count` model calls of 1,000 people, each talking in 3 channels of their workspace."""
    rng = random.Random(1)
    people = [(f"U{i}", WORKSPACES[i % 5], rng.sample(range(10), 3)) for i in range(1000)]
    rows = []
    for ident in range(count):
        user, (platform, workspace), channels = people[rng.randrange(1000)]
        if rng.random() < 0.01:
            user, platform = "admin", "api"
        model, price_in, price_out = rng.choices(MODELS, weights=(6, 2, 1, 1))[0]
        prompt, completion = rng.randrange(200, 4000), rng.randrange(10, 800)
        cost = None if price_in is None else (prompt * price_in + completion * (price_out or 0)) / 1e6
        at = T0 + timedelta(seconds=rng.randrange(USAGE_DAYS * 86400))
        rows.append((ident // 3 + 1, ident % 3 + 1, f"run-{ident // 3}", ident // 30 + 1, platform, workspace,
                     f"{workspace}-C{rng.choice(channels)}", user, model, prompt, completion,
                     prompt // 4, cost, at))
    return rows


async def fill_usage(url: str, calls: int) -> int:
    """The calls with COPY, then their day's sums as the ledger adds them up; the sums' rows."""
    conn = await asyncpg.connect("postgresql://" + url.split("://", 1)[1])
    columns = ["message_id", "seq", "run_id", "session_id", "platform", "workspace", "channel",
               "user", "model", "prompt_tokens", "completion_tokens", "cached_tokens", "cost", "at"]
    rows = usage_calls(calls)
    for start in range(0, len(rows), 100_000):
        await conn.copy_records_to_table("usage_call", records=rows[start:start + 100_000],
                                         columns=columns)
    for dimension, (subject, workspace) in ROLLUPS.items():
        await conn.execute(
            "INSERT INTO usage_day (dimension, subject, workspace, day, platform, calls, "
            "prompt_tokens, completion_tokens, cached_tokens, cost, priced_calls) "
            f"SELECT '{dimension}', {subject}, {workspace}, (at AT TIME ZONE 'UTC')::date, "
            "platform, count(*), sum(prompt_tokens), sum(completion_tokens), "
            "sum(cached_tokens), coalesce(sum(cost), 0), count(cost) FROM usage_call "
            "GROUP BY 2, 3, 4, 5")
    await conn.execute("ANALYZE")
    rollup = await conn.fetchval("SELECT count(*) FROM usage_day")
    await conn.close()
    return int(rollup)


async def measure_usage(base: str, requests: int) -> None:
    month = {"from": T0.date().isoformat(), "to": (T0 + timedelta(days=30)).date().isoformat()}
    async with httpx.AsyncClient(base_url=base, timeout=120) as client:
        for by in ("user", "channel", "workspace", "model", "day"):
            for label, window in (("every day", {}), ("one month", month)):
                took = []
                for _ in range(requests):
                    started = time.perf_counter()
                    answer = await client.get("/api/usage", params={"by": by, "limit": 200,
                                                                    **window})
                    took.append(time.perf_counter() - started)
                    assert answer.status_code == 200, answer.text
                groups = len(answer.json()["items"])
                print(f"usage by {by:9} {label:9}: p50 {statistics.median(took) * 1000:6.1f} ms"
                      f"   p99 {percentile(took, 0.99) * 1000:6.1f} ms   ({groups} groups on "
                      f"the first page, {requests} requests)")


async def measure_console(base: str, pages: int, big: int) -> None:
    """Each console page, `pages` times; a page's answer is checked before it is counted."""
    needle = f"question {big // 2} about"
    paths = {
        "conversations, first page": "/console/conversations",
        "conversations, search q": f"/console/conversations?q={needle.replace(' ', '+')}",
        "conversations, has-question filter": "/console/conversations?waiting=1",
        "a conversation of 2 messages": f"/console/conversations/{big // 2}",
        "the big conversation (its last 40 messages)": f"/console/conversations/{big}",
        "now": "/console/now",
        "feedback (👎)": "/console/feedback",
        "usage (the last 30 days, 4 charts)": "/console/usage?from=2026-01-01&to=2026-01-30",
        "usage (every day of the calls, 90)": "/console/usage?from=2026-01-01&to=2026-03-31",
    }
    async with httpx.AsyncClient(base_url=base, timeout=120) as client:
        for name, path in paths.items():
            times = []
            for _ in range(pages):
                started = time.perf_counter()
                response = await client.get(path)
                times.append(time.perf_counter() - started)
                assert response.status_code == 200, (path, response.status_code)
            print(f"console {name}: p50 {statistics.median(times) * 1000:7.1f} ms"
                  f"   p99 {percentile(times, 0.99) * 1000:7.1f} ms   ({pages} requests)")


async def main(sessions: int, messages: int, pages: int, calls: int, reports: int) -> None:
    name = f"hermes_chat_bench_admin_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(ADMIN_URL)
    await admin.execute(f'CREATE DATABASE "{name}"')
    url = ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    try:
        await db.migrate(url)
        await fill(url, sessions, messages)
        rollup = await fill_usage(url, calls)
        await db.open_database(url)
        print(f"rows: {sessions + 1:,} sessions, {2 * sessions + messages:,} messages "
              f"(one session of {messages:,}), {calls:,} model calls ({rollup:,} rows of "
              f"their day's sums); PostgreSQL, admin API over loopback HTTP")
        await serve_and_measure(pages, sessions + 1, reports)
        await db.close_database()
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


async def serve_and_measure(pages: int, big: int, reports: int) -> None:
    bridge = BridgeClient("http://127.0.0.1:9")  # not called by these routes but Now's health
    logging.getLogger("admin.health").setLevel(logging.ERROR)  # its warning, once a request
    pool = RunPool(bridge, Catalogue((), Path(".")))
    app = create_app(Settings(), AdminServices(bridge=bridge, catalogue=pool.catalogue, runtime=pool),
                     plugins=[ConsolePlugin(None)])
    server = uvicorn.Server(uvicorn.Config(app, port=0, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        await measure(f"http://127.0.0.1:{port}", pages, big)
        await measure_usage(f"http://127.0.0.1:{port}", reports)
        await measure_console(f"http://127.0.0.1:{port}", pages, big)
    finally:
        server.should_exit = True
        await task
        await bridge.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--calls", type=int, default=1_000_000)
    parser.add_argument("--reports", type=int, default=30)
    args = parser.parse_args()
    asyncio.run(main(args.sessions, args.messages, args.pages, args.calls, args.reports))
