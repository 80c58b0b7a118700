"""PostgreSQL restarted mid-run (issue 8 §4): runs go on, buffered rows are retried, nothing is
lost or doubled, clarify pauses are stored once the database is back, /health says what it sees.

The outage is real: this process's test database drops its connections and refuses new ones
(tests/core/runtime/db_outage.py). SQLite is a file inside this process and cannot go away, so
the outage tests skip there; the idempotence and `outlast` tests run on both.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import asyncpg
import httpx
import pytest
from tortoise.exceptions import IntegrityError, TransactionManagementError

from admin.app import create_app
from admin.services import AdminServices
from core.agent.bridge.client import BridgeClient
from core.agent.events import TextDelta
from core.chat import sessions
from core.config import Settings
from core.errors import DatabaseUnavailable
from core.runtime import records
from core.runtime.leases import Leases
from core.runtime.log_buffer import LogBuffer
from core.runtime.pool import RunPool
from core.runtime.recovery import recover
from core.runtime.updates import RunUpdate
from core.store.models import ChatMessage, ClarifyPause, MessageStatus, PauseStatus, RunLease, utc_now
from core.store.outage import Patience, is_outage, outlast
from tests.admin.server import serving
from tests.bridge.harness import wait_until
from tests.conftest import BACKEND, POSTGRES_ADMIN_URL
from tests.core.runtime.db_outage import DatabaseOutage
from tests.core.runtime.waiting import finished, message, stored_seqs, until
from tests.fakes.clock import ManualClock
from tests.fakes.fake_bridge import FakeBridge, Stall, WaitAnswer, ev
from tests.support.runtime import FAST, catalogue_for
from tests.fakes.changes import WAIT

BEAT = 0.2  # the fake Bridge's heartbeat while it holds a stream: well inside FAST's read timeout


@pytest.fixture
async def outage(db: str) -> AsyncIterator[DatabaseOutage]:
    """The test database, ready to go away; request it last so it is back before pools close."""
    if BACKEND != "postgres":
        pytest.skip("the outage is simulated on PostgreSQL only: SQLite is a file in this "
                    "process and cannot restart (run with HERMES_TEST_DB=postgres)")
    async with DatabaseOutage(db, POSTGRES_ADMIN_URL) as database:
        yield database


@pytest.fixture
async def impatient_pool(db: str, fake_bridge: FakeBridge, skills_dir: Path
                         ) -> AsyncIterator[RunPool]:
    """A pool that gives up on the database after 1 s, with leases renewed every 0.2 s."""
    async with BridgeClient(fake_bridge.url, policy=FAST) as client:
        runs = RunPool(client, catalogue_for(None, skills_dir),
                       patience=Patience(give_up_after=1.0, max_delay=0.2),
                       leases=Leases(ttl=timedelta(seconds=0.6)))
        await runs.open()
        yield runs
        await runs.close()


def said(first: int, last: int) -> list:
    return [ev("text", text=f"w{i} ") for i in range(first, last)]


async def stored(message_id: int, count: int) -> list[int]:
    """The stored seqs of a message, once there are `count` of them."""
    async with asyncio.timeout(WAIT):
        while len(seqs := await stored_seqs(message_id)) < count:
            await asyncio.sleep(0.01)
    return seqs


async def started(pool: RunPool, fake: FakeBridge, script: list, first_rows: int) -> RunUpdate:
    """A run playing `script`, once its first `first_rows` events are stored."""
    fake.default_script = lambda run_id: script
    run = await pool.start((await sessions.create_session()).id, "talk")
    assert await stored(run.message_id, first_rows) == list(range(1, first_rows + 1))
    return run


def logged(caplog: pytest.LogCaptureFixture, text: str) -> bool:
    return any(text in record.getMessage() for record in caplog.records)


async def test_a_run_streams_through_restarts_between_events_and_at_done(
    fake_pool: RunPool, fake_bridge: FakeBridge, caplog: pytest.LogCaptureFixture,
    outage: DatabaseOutage,
):
    run = await started(fake_pool, fake_bridge, [
        *said(0, 3), Stall("gap", BEAT), *said(3, 6), Stall("end", BEAT),
        ev("done", final_text="all there"),
    ], 3)

    await outage.begin()
    fake_bridge.release("gap")
    await until(fake_pool, run.run_id, lambda u: "w5" in str(u.state.thinking))
    await wait_until(lambda: logged(caplog, "log flush failed"))
    assert fake_pool.buffer.pending == 3  # kept for the retry
    await outage.end()
    assert await stored(run.message_id, 6) == [1, 2, 3, 4, 5, 6]

    await outage.begin()
    fake_bridge.release("end")
    await wait_until(lambda: logged(caplog, "database unreachable while LogBuffer.flush"))
    assert fake_pool.view(run.run_id).status == MessageStatus.RUNNING  # waiting, not crashed
    await outage.end()
    done = await finished(fake_pool, run.run_id)
    assert (done.status, done.error) == (MessageStatus.SUCCESS, None)
    assert await stored_seqs(done.message_id) == list(range(1, 8))
    row = await message(done.message_id)
    assert (row.status, row.content) == (MessageStatus.SUCCESS, "all there")


async def test_a_clarify_asked_during_an_outage_is_stored_after_it_and_can_be_answered(
    fake_pool: RunPool, fake_bridge: FakeBridge, caplog: pytest.LogCaptureFixture,
    outage: DatabaseOutage,
):
    run = await started(fake_pool, fake_bridge, [
        *said(0, 2), Stall("ask", BEAT),
        ev("clarify_request", clarify_id="c-db", question="Which one?", choices=["red", "blue"]),
        WaitAnswer("c-db", BEAT), *said(2, 3), ev("done", final_text="blue it is"),
    ], 2)

    await outage.begin()
    fake_bridge.release("ask")
    await wait_until(lambda: logged(caplog, "database unreachable while LogBuffer.flush"))
    assert fake_pool.view(run.run_id).pause is None  # nobody sees a question not yet stored
    await outage.end()
    asked = await until(fake_pool, run.run_id, lambda u: u.pause is not None)
    assert (asked.pause.question, asked.pause.status) == ("Which one?", PauseStatus.UNANSWERED)
    assert await ClarifyPause.filter(clarify_id="c-db").count() == 1

    outcome = await fake_pool.answer("c-db", "blue", user="U1")
    assert outcome.accepted
    done = await finished(fake_pool, run.run_id)
    assert done.status == MessageStatus.SUCCESS
    assert await stored_seqs(done.message_id) == [1, 2, 3, 4, 5]
    pause = await ClarifyPause.get(clarify_id="c-db")
    assert (pause.status, pause.answer, pause.answered_by) == (PauseStatus.ANSWERED, "blue", "U1")


async def test_health_and_every_route_say_the_database_is_down_during_an_outage_and_up_after(
    fake_pool: RunPool, outage: DatabaseOutage
):
    services = AdminServices(fake_pool.bridge, fake_pool.catalogue, fake_pool)
    async with serving(create_app(Settings(), services)) as url, \
            httpx.AsyncClient(base_url=url, timeout=WAIT) as http:
        before = await http.get("/api/health")
        assert (before.status_code, before.json()["database"]) == (200, "ok")

        await outage.begin()
        down = await http.get("/api/health")
        assert down.status_code == 503
        assert down.json() == {"status": "degraded", "database": "unreachable", "bridge": "ok"}
        listing = await http.get("/api/chat/sessions")  # any other route: a 503, not a 500
        assert listing.status_code == 503 and listing.headers["retry-after"] == "5"
        assert listing.json()["code"] == "database_unavailable"

        await outage.end()
        up = await http.get("/api/health")  # the pool reconnects by itself: no retry needed
        assert up.status_code == 200
        assert up.json() == {"status": "ok", "database": "ok", "bridge": "ok"}


async def test_a_run_whose_database_stays_away_is_left_for_recovery_and_resumed(
    impatient_pool: RunPool, fake_bridge: FakeBridge, caplog: pytest.LogCaptureFixture,
    outage: DatabaseOutage,
):
    run = await started(impatient_pool, fake_bridge, [
        *said(0, 2), Stall("end", BEAT), *said(2, 4), ev("done", final_text="resumed"),
    ], 2)

    await outage.begin()
    fake_bridge.release("end")
    await wait_until(lambda: logged(caplog, "run left in flight for recovery"))
    assert impatient_pool.live(run.run_id) is None
    await outage.end()

    # the buffer kept the rows and writes them, the done event's too; the status waits
    assert await stored(run.message_id, 5) == [1, 2, 3, 4, 5]
    assert (await message(run.message_id)).status == MessageStatus.RUNNING
    assert await recover(impatient_pool) == 1
    done = await finished(impatient_pool, run.run_id)
    assert done.status == MessageStatus.SUCCESS
    assert await stored_seqs(run.message_id) == [1, 2, 3, 4, 5]
    assert (await message(run.message_id)).content == "resumed"


async def test_a_pool_stopping_during_an_outage_exits_and_its_run_resumes_elsewhere(
    fake_bridge: FakeBridge, skills_dir: Path, caplog: pytest.LogCaptureFixture,
    outage: DatabaseOutage,
):
    """SIGTERM while the database is away: the unwritten rows go with the process, the run
    stays RUNNING and leased, and the next pool resumes it from the last stored event."""
    async with BridgeClient(fake_bridge.url, policy=FAST) as client:
        leaving = RunPool(client, catalogue_for(None, skills_dir),
                          leases=Leases(ttl=timedelta(seconds=0.6)))
        await leaving.open()
        run = await started(leaving, fake_bridge, [
            *said(0, 2), Stall("more", BEAT), *said(2, 4), Stall("end", BEAT),
            ev("done", final_text="resumed after the stop"),
        ], 2)
        await outage.begin()
        fake_bridge.release("more")
        await until(leaving, run.run_id, lambda u: "w3" in str(u.state.thinking))
        await leaving.close()  # returns: nothing raised at the operator
        assert logged(caplog, "stopping with 2 log rows unwritten")
        await outage.end()

        fake_bridge.release("end")
        after = RunPool(client, catalogue_for(None, skills_dir),
                        leases=Leases(ttl=timedelta(seconds=0.6)))
        await after.open()
        try:
            async with asyncio.timeout(WAIT):  # its lease runs out, then it is taken over
                while not await recover(after):
                    await asyncio.sleep(0.05)
            done = await finished(after, run.run_id)
        finally:
            await after.close()
    assert done.status == MessageStatus.SUCCESS
    assert await stored_seqs(done.message_id) == [1, 2, 3, 4, 5]


async def test_failed_lease_renewals_during_an_outage_neither_stop_the_keeper_nor_the_run(
    impatient_pool: RunPool, fake_bridge: FakeBridge, caplog: pytest.LogCaptureFixture,
    outage: DatabaseOutage,
):
    run = await started(impatient_pool, fake_bridge, [
        *said(0, 1), Stall("end", BEAT), ev("done", final_text="kept"),
    ], 1)

    await outage.begin()
    await wait_until(lambda: logged(caplog, "lease renewal failed"))
    await outage.end()
    back = utc_now()
    ttl = impatient_pool.leases.ttl
    async with asyncio.timeout(WAIT):  # renewed after the outage: the keeper lives on
        while (await RunLease.get(run_id=run.run_id)).expires_at <= back + ttl:
            await asyncio.sleep(0.01)

    fake_bridge.release("end")
    done = await finished(impatient_pool, run.run_id)
    assert done.status == MessageStatus.SUCCESS
    assert await stored_seqs(done.message_id) == [1, 2]
    async with asyncio.timeout(WAIT):  # released as the run's task ends, just after
        while await RunLease.filter(run_id=run.run_id).exists():
            await asyncio.sleep(0.01)


async def test_a_compaction_written_twice_adds_one_summary(db: str):
    s = (await sessions.create_session()).id
    turn = await records.insert_turn(s, "run-compacted", MessageStatus.RUNNING, text="hello")
    first = await records.add_compaction(turn, turn.user.id, "They said hello.")
    again = await records.add_compaction(turn, turn.user.id, "They said hello.")  # a retry
    assert again.id == first.id
    assert await ChatMessage.filter(session_id=s, status=MessageStatus.SUMMARY).count() == 1


async def test_a_connection_dropped_under_a_flush_does_not_break_the_next_one(
    db: str, outage: DatabaseOutage
):
    s = (await sessions.create_session()).id
    turn = await records.insert_turn(s, "run-dropped", MessageStatus.RUNNING, text="hello")
    buffer = LogBuffer()
    buffer.add(turn.assistant.id, TextDelta(seq=1, at=utc_now(), text="a"))
    outage.drop_unnoticed()
    with pytest.raises(Exception) as dropped:  # BEGIN meets the dropped connection
        await buffer.flush()
    assert is_outage(dropped.value)
    await buffer.flush()  # the same task, the server up again: a new connection, the rows kept
    assert await stored_seqs(turn.assistant.id) == [1]


# --- outlast, with a clock that moves only when it sleeps ---------------------------------

DROPPED = asyncpg.exceptions.ConnectionDoesNotExistError("connection was closed")


class Flaky:
    """An operation that fails `failures` times with `error`, then answers 42."""

    def __init__(self, failures: int, error: Exception = DROPPED) -> None:
        self.failures, self.error, self.calls = failures, error, 0

    async def __call__(self) -> int:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error
        return 42


def sleeper(clock: ManualClock, slept: list[float]):  # noqa: ANN201
    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock.advance(seconds)
    return sleep


async def test_outlast_retries_with_capped_backoff_until_the_database_answers():
    clock, slept = ManualClock(), []
    operation = Flaky(5)
    result = await outlast(operation, "testing", Patience(10.0, first_delay=0.1, max_delay=0.3),
                           monotonic=clock, sleep=sleeper(clock, slept))
    assert (result, operation.calls) == (42, 6)
    assert slept == pytest.approx([0.1, 0.2, 0.3, 0.3, 0.3])


async def test_outlast_gives_up_after_its_patience():
    clock, slept = ManualClock(), []
    with pytest.raises(DatabaseUnavailable, match="unreachable for 5 s"):
        await outlast(Flaky(1000), "testing", Patience(5.0, first_delay=1.0, max_delay=1.0),
                      monotonic=clock, sleep=sleeper(clock, slept))
    assert sum(slept) == pytest.approx(5.0)


async def test_outlast_lets_other_errors_through_at_once():
    clock, slept = ManualClock(), []
    operation = Flaky(1, IntegrityError("duplicate key"))
    with pytest.raises(IntegrityError):
        await outlast(operation, "testing", monotonic=clock, sleep=sleeper(clock, slept))
    assert (operation.calls, slept) == (1, [])


def test_an_outage_is_recognised_behind_the_error_it_caused():
    try:
        try:
            raise DROPPED
        except asyncpg.PostgresError:  # the clean-up on the dropped connection fails in turn
            raise TransactionManagementError("transaction is in an invalid state")  # noqa: B904 (the implicit context is what is tested)
    except TransactionManagementError as error:
        wrapped = error
    assert is_outage(wrapped)
    assert is_outage(asyncpg.InterfaceError("cannot call Transaction.rollback(): the underlying "
                                            "connection is closed"))
    assert is_outage(ConnectionRefusedError())
    assert is_outage(asyncpg.exceptions.InternalClientError(
        "cannot switch to state 15; another operation (2) is in progress"))
    assert not is_outage(IntegrityError("duplicate key"))
    assert not is_outage(TransactionManagementError("transaction already finalised"))
    assert not is_outage(asyncpg.exceptions.LockNotAvailableError("lock not available"))
    assert not is_outage(asyncpg.InterfaceError("another operation is in progress"))


def test_a_sqlite_file_locked_by_another_process_is_an_outage_not_a_bad_row():
    """A flush that meets it keeps its rows for the retry instead of splitting the batch into
    placeholders (core/runtime/log_buffer.py)."""
    assert is_outage(sqlite3.OperationalError("database is locked"))
    assert not is_outage(sqlite3.OperationalError("no such table: chat_message_log"))
    assert not is_outage(sqlite3.IntegrityError("FOREIGN KEY constraint failed"))


def test_the_outage_timeout_setting_sets_the_patience():
    settings = Settings.from_env({"DATABASE_OUTAGE_TIMEOUT": "30"})
    assert settings.database_patience.give_up_after == 30.0
    assert Settings().database_patience == Patience()
