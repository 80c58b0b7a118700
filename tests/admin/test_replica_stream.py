"""The admin SSE of a run another replica drives: woken by PostgreSQL NOTIFY, not by polling.

Two run pools on one database, as two replicas: A drives the run, B's admin API streams it.
B's fallback poll is 30 s, so every deadline here (a few seconds) is only met through the
notifications A's log flushes send, including after B's LISTEN connection was cut.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from tortoise import connections

from core.agent.bridge.client import BridgeClient
from core.chat import sessions
from core.runtime.notify import APPLICATION_NAME, LogNotices, highest_seqs, listening, payloads
from core.runtime.pool import RunPool
from tests.admin.conftest import AUTH, admin_on
from tests.admin.server import poll_until
from tests.admin.sse import Frame, events, stream
from tests.conftest import BACKEND
from tests.core.runtime.waiting import finished, until
from tests.fakes.fake_bridge import FakeBridge, Item, Stall, ev
from tests.support.runtime import FAST, catalogue_for
from tests.fakes.changes import WAIT

POSTGRES_ONLY = pytest.mark.skipif(
    BACKEND != "postgres",
    reason="LISTEN/NOTIFY is PostgreSQL's; on SQLite one replica drives and streams every run",
)
FALLBACK = 30.0  # B's safety-net poll: far beyond every deadline below
PROMPT = 5.0  # seconds an event may take from A's Bridge to B's client (flushes are 0.2 s apart)


def _script(run_id: str) -> list[Item]:
    talk = lambda prefix: [ev("text", text=f"{prefix}{i} ") for i in range(3)]  # noqa: E731
    return [*talk("a"), Stall(run_id, heartbeat=0.2), *talk("b"),
            Stall(f"{run_id}+", heartbeat=0.2), *talk("c"), ev("done", final_text="all done")]


async def _pool(client: BridgeClient, skills: Path, notices: LogNotices | None = None) -> RunPool:
    pool = RunPool(client, catalogue_for(None, skills), log_notices=notices)
    await pool.open()
    return pool


async def _until_seq(frames: AsyncIterator[Frame], seq: int | None) -> tuple[list[Frame], float]:
    started = time.monotonic()
    async with asyncio.timeout(PROMPT):
        got = await events(frames, None if seq is None else (lambda f: f.id == seq))
    return got, time.monotonic() - started


async def _listener_pid() -> int | None:
    rows = await connections.get("default").execute_query_dict(
        # This worker's database only: another xdist worker's replicas listen too.
        "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()",
        [APPLICATION_NAME])
    return rows[0]["pid"] if len(rows) == 1 else None


@POSTGRES_ONLY
async def test_another_replicas_run_streams_every_event_once_woken_by_notify(
    db: str, skills_dir: Path
) -> None:
    async with FakeBridge(heartbeat=0.2) as fake, BridgeClient(fake.url, policy=FAST) as client, \
            listening(db, fallback=FALLBACK) as notices:
        fake.default_script = _script
        a = await _pool(client, skills_dir)
        b = await _pool(client, skills_dir, notices)
        await poll_until(lambda: _has_listener())
        run = await a.start((await sessions.create_session()).id, "go")
        await until(a, run.run_id, lambda u: u.state.last_seq == 3)
        async with admin_on(b) as url, \
                httpx.AsyncClient(base_url=url, headers=AUTH, timeout=WAIT) as api, \
                stream(api, run.run_id) as frames:
            first, _ = await _until_seq(frames, 3)
            fake.release(run.run_id)
            second, latency = await _until_seq(frames, 6)
            print(f"B streamed A's next three events {latency * 1000:.0f} ms after the release")

            cut = await _listener_pid()
            await connections.get("default").execute_query(
                "SELECT pg_terminate_backend($1)", [cut])
            await poll_until(lambda: _has_listener(other_than=cut))  # B reconnected by itself
            fake.release(f"{run.run_id}+")
            rest, _ = await _until_seq(frames, None)  # to the end of the stream
        done = await finished(a, run.run_id)
        assert b.live(run.run_id) is None  # B followed the stored log, never the Bridge
        await a.close()
        await b.close()

    frames_seen = first + second + rest
    assert [f.id for f in frames_seen] == list(range(1, 11))  # every event once, in order
    assert (frames_seen[-1].event, frames_seen[-1].data) == ("done", {"final_text": "all done", "model": None})
    assert done.state.last_seq == 10
    assert latency < PROMPT < FALLBACK


async def _has_listener(other_than: int | None = None) -> bool:
    pid = await _listener_pid()
    return pid is not None and pid != other_than


def test_a_notification_wakes_only_the_followers_of_its_message() -> None:
    notices = LogNotices(fallback=FALLBACK)
    with notices.watching(1) as one, notices.watching(2) as two:
        notices.received("2:17")
        notices.received("not-a-message")  # logged and ignored
        assert (one.is_set(), two.is_set()) == (False, True)
        notices.wake()
        assert one.is_set()
    notices.received("1:3")  # nobody follows it any more: nothing to do


def test_a_flush_announces_each_message_once_with_its_highest_seq() -> None:
    at = None
    batch = [(7, 1, "text", at), (9, 4, "text", at), (7, 3, "text", at), (7, 2, "text", at)]
    assert payloads(highest_seqs(batch)) == ["7:3", "9:4"]
