"""Two replicas on one database: leases decide who drives a run; a dead one's runs move over."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path

from core.agent.bridge.client import BridgeClient
from core.chat import sessions
from core.chat.policy import Policy
from core.runtime.leases import Leases
from core.runtime.pool import RunPool
from core.runtime.recovery import recover
from core.store.models import MessageStatus, PauseStatus, RunLease, utc_now
from tests.bridge.harness import wait_until
from tests.core.runtime.waiting import finished, stored_seqs, until
from tests.fakes.fake_bridge import FakeBridge, Stall, WaitAnswer, ev
from tests.support.runtime import FAST, catalogue_for


class Clock:
    def __init__(self) -> None:
        self.offset = timedelta(0)

    def __call__(self):
        return utc_now() + self.offset


async def _replica(url: str, skills: Path, clock: Clock) -> RunPool:
    pool = RunPool(BridgeClient(url, policy=FAST), catalogue_for(None, skills),
                   leases=Leases(ttl=timedelta(seconds=30), clock=clock))
    await pool.open()
    return pool


async def test_a_dead_replicas_run_is_resumed_by_another(db: str, skills_dir: Path) -> None:
    clock = Clock()
    async with FakeBridge() as fake:
        fake.default_script = lambda run_id: [
            ev("text", text="half "), Stall(run_id), ev("text", text="done"),
            ev("done", final_text="half done"),
        ]
        a = await _replica(fake.url, skills_dir, clock)
        b = await _replica(fake.url, skills_dir, clock)
        run = await a.start((await sessions.create_session()).id, "work")
        await until(a, run.run_id, lambda u: u.state.last_seq == 1)
        await a.buffer.flush()

        assert await recover(b) == 0  # A holds the lease: B leaves the run alone
        await a.close(release=False)  # A dies: no clean-up, its lease simply stops being renewed
        assert await recover(b) == 0  # not yet expired
        clock.offset = timedelta(seconds=31)
        assert await recover(b) == 1
        fake.release(run.run_id)
        done = await finished(b, run.run_id)
        await b.close()

    assert done.status == MessageStatus.SUCCESS and str(done.state.thinking) == "half done"
    assert await stored_seqs(done.message_id) == [1, 2, 3]
    assert await RunLease.filter(run_id=run.run_id).count() == 0  # released when it finished


@asynccontextmanager
async def _lost_to_b(skills_dir: Path) -> AsyncIterator[tuple[FakeBridge, RunPool, RunPool, str]]:
    """Replica A drives a run, stalls past its lease (a long GC pause, a busy loop), and B
    takes the run over. A's connection holds at the first stall; a marker fires once, so B's
    (which follows the run) passes it and holds at the second: B must not finish before A
    looks. Yields the fake Bridge, A, B and the run id; both stalls released at the end."""
    clock = Clock()
    async with FakeBridge() as fake:
        fake.default_script = lambda run_id: [
            Stall(run_id), Stall(f"{run_id}-b"), ev("done", final_text="x")]
        a = await _replica(fake.url, skills_dir, clock)
        b = await _replica(fake.url, skills_dir, clock)
        run = await a.start((await sessions.create_session()).id, "work")
        await wait_until(lambda: run.run_id in fake.runs)
        clock.offset = timedelta(seconds=31)
        assert await recover(b) == 1
        yield fake, a, b, run.run_id
        fake.release(run.run_id)
        fake.release(f"{run.run_id}-b")
        await a.close()
        await b.close()


async def test_a_replica_that_lost_its_lease_stops_driving_the_run(db: str, skills_dir: Path) -> None:
    async with _lost_to_b(skills_dir) as (fake, a, b, run_id):
        driven = a.live(run_id)
        await a.renew_leases()  # A notices and lets go
        assert driven is not None and driven.task is not None and driven.task.done()
        assert a.live(run_id) is None
        fake.release(run_id)
        fake.release(f"{run_id}-b")
        done = await finished(b, run_id)
    assert done.status == MessageStatus.SUCCESS


async def test_a_run_whose_new_owner_gives_it_up_is_taken_back_and_finishes(
    db: str, skills_dir: Path
) -> None:
    """A lost the lease to B (A was merely slow); B stops before finishing the run: A, which
    let the run go when it saw the lease move, adopts it again. It never stays RUNNING."""
    async with _lost_to_b(skills_dir) as (_, a, b, run_id):
        await a.renew_leases()  # A sees the lease moved and lets the run go
        await b.close()  # B stops cleanly while the run waits: it hands the lease back
        assert await recover(a) == 1
        done = await finished(a, run_id)
    assert done.status == MessageStatus.SUCCESS
    assert await RunLease.filter(run_id=run_id).count() == 0


async def test_a_question_answered_on_another_replica_shows_answered_where_the_run_is_driven(
    db: str, skills_dir: Path
) -> None:
    """The click reached B; A drives the run: A's views of it say who answered, to its end."""
    clock = Clock()
    async with FakeBridge() as fake:
        fake.default_script = lambda run_id: [
            ev("clarify_request", clarify_id=f"c-{run_id}", question="Which?", choices=["a"]),
            WaitAnswer(f"c-{run_id}"), ev("text", text="a it is"), ev("done", final_text="a it is"),
        ]
        a = await _replica(fake.url, skills_dir, clock)
        b = await _replica(fake.url, skills_dir, clock)
        run = await a.start((await sessions.create_session()).id, "pick")
        await until(a, run.run_id, lambda u: u.pause is not None)
        assert (await b.answer(f"c-{run.run_id}", "a", user="U2")).accepted
        done = await finished(a, run.run_id)
        await a.close()
        await b.close()

    assert done.status == MessageStatus.SUCCESS and done.pause is not None
    assert (done.pause.status, done.pause.answered_by) == (PauseStatus.ANSWERED, "U2")


async def test_an_approval_decided_on_another_replica_shows_decided_where_the_run_is_driven(
    db: str, skills_dir: Path
) -> None:
    """The click on the approval reached B; A drives the run: A's views of it say who decided
    (not that it expired), to its end. The same rule as a clarify question's."""
    clock = Clock()
    async with FakeBridge() as fake:
        fake.default_script = lambda run_id: [
            ev("approval_request", approval_id=f"a-{run_id}", command="rm -rf /tmp/x",
               reason="recursive delete", choices=["once", "deny"]),
            WaitAnswer(f"a-{run_id}"), ev("text", text="removed"), ev("done", final_text="removed"),
        ]
        a = await _replica(fake.url, skills_dir, clock)
        b = await _replica(fake.url, skills_dir, clock)
        run = await a.start((await sessions.create_session()).id, "clean up")
        await until(a, run.run_id, lambda u: u.approval is not None)
        policy = Policy.of("anyone", admins=["U2"])
        assert (await b.decide(f"a-{run.run_id}", "once", "U2", policy)).accepted
        done = await finished(a, run.run_id)
        await a.close()
        await b.close()

    assert done.status == MessageStatus.SUCCESS and done.approval is not None
    assert (done.approval.status, done.approval.answered_by, done.approval.answer) == (
        PauseStatus.ANSWERED, "U2", "once")
