"""Restarts: a killed runtime's run is finished by the next one; clarify survives a restart."""

from __future__ import annotations

import asyncio
import sys
from datetime import timedelta
from pathlib import Path

from core.chat import sessions
from core.agent.bridge.client import BridgeClient
from core.store.models import ChatMessageLog, ClarifyPause, MessageStatus, PauseStatus, utc_now
from core.runtime.jobs import enforce_clarify_fallback, expire_old_pauses, start_jobs
from core.runtime.leases import Leases
from core.runtime.pool import RunPool
from core.runtime import records
from core.runtime.recovery import recover
from tests.bridge.harness import RunningBridge
from tests.core.runtime.waiting import finished, message, stored_seqs, until
from tests.fakes.fake_bridge import FakeBridge, Stall, WaitAnswer, ev
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply
from tests.support.runtime import FAST, catalogue_for, opened_pool
from tests.fakes.changes import WAIT

ROOT = Path(__file__).parents[3]
STORY = ("Once upon a time " + "there was a very long story. " * 40).strip()
# How long the child may take to report its first stored row: a new Python process importing
# the runtime (4 s on a loaded machine), then, in a test process whose Bridge has not run a turn
# yet, that Bridge's first agent build and turn (15 s more there). A bound on a hang, not a
# wait: the test goes on as soon as the line arrives, and the run is killed only after it.
CHILD_STARTUP = 60.0


async def _pool(url: str, llm: ScriptedLLM | None, skills: Path, leases: Leases | None = None
                ) -> tuple[RunPool, BridgeClient]:
    client = BridgeClient(url, policy=FAST)
    pool = RunPool(client, catalogue_for(llm, skills), leases=leases)
    await pool.open()
    return pool, client


async def test_kill_9_mid_run_then_a_new_runtime_finishes_it(
    db: str, bridge: RunningBridge, llm: ScriptedLLM, skills_dir: Path
):
    gate = asyncio.Event()
    llm.script(text_reply(STORY, gate=gate, chunk_size=20))
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.core.runtime.child_runtime", db, bridge.url,
        llm.base_url, llm.model, cwd=ROOT, stdout=asyncio.subprocess.PIPE,
    )
    try:
        line = await asyncio.wait_for(child.stdout.readline(), CHILD_STARTUP)
        run_id, message_id, persisted = line.decode().split()
    finally:
        child.kill()  # SIGKILL: no clean-up of any kind
        await child.wait()
    assert int(persisted) >= 1
    gate.set()  # the Bridge goes on with the run while no runtime follows it

    later = Leases(clock=lambda: utc_now() + timedelta(seconds=31))  # the dead one's lease expired
    pool, client = await _pool(bridge.url, llm, skills_dir, later)
    try:
        assert await recover(pool) == 1
        done = await finished(pool, run_id)
    finally:
        await pool.close()
        await client.aclose()
    assert done.status == MessageStatus.SUCCESS
    assert (await message(int(message_id))).content == STORY
    seqs = await stored_seqs(int(message_id))
    assert seqs == list(range(1, seqs[-1] + 1))  # every row exactly once
    assert await ChatMessageLog.filter(message_id=int(message_id), kind="done").count() == 1


async def test_a_clarify_answered_after_a_restart_resumes_the_run(
    db: str, bridge: RunningBridge, llm: ScriptedLLM, skills_dir: Path
):
    llm.script(tool_reply(ToolCall("clarify", {"question": "Tea or coffee?", "choices": ["tea"]})),
               text_reply("Tea, then."))
    first, client = await _pool(bridge.url, llm, skills_dir)
    s = (await sessions.create_session()).id
    run = await first.start(s, "a drink?")
    asked = await until(first, run.run_id, lambda u: u.pause is not None)
    await first.close()  # a clean restart: the run stays RUNNING, waiting on the question
    await client.aclose()

    second, client = await _pool(bridge.url, llm, skills_dir)
    try:
        seen = second.subscribe()
        assert await recover(second) == 1
        shown = next(u for u in await seen.next() if u.run_id == run.run_id)
        assert shown.pause.clarify_id == asked.pause.clarify_id  # adapters show the buttons again
        assert shown.state.pending_clarify is not None
        outcome = await second.answer(asked.pause.clarify_id, "tea", "U1")
        done = await finished(second, run.run_id)
    finally:
        await second.close()
        await client.aclose()
    assert outcome.accepted and done.status == MessageStatus.SUCCESS
    assert (await message(done.message_id)).content == "Tea, then."


async def test_a_run_the_bridge_forgot_goes_on_from_its_start_on_the_new_bridge(
    db: str, skills_dir: Path
):
    async with FakeBridge() as fake:
        fake.default_script = lambda run_id: [
            ev("text", text="half"), Stall(run_id), ev("done", final_text="x")]
        pool, client = await _pool(fake.url, None, skills_dir)
        run = await pool.start((await sessions.create_session()).id, "hi")
        await until(pool, run.run_id, lambda u: u.state.last_seq == 1)
        await pool.close()
        fake.runs.clear()  # the Bridge restarted and lost its runs
        fake.default_script = lambda run_id: [
            ev("status", category="resumed", message="Resumed"), ev("done", final_text="whole")]
        again, client2 = await _pool(fake.url, None, skills_dir)
        try:
            assert await recover(again) == 1
            done = await finished(again, run.run_id)
        finally:
            await again.close()
            await client.aclose()
            await client2.aclose()
    assert (done.status, done.state.final_text) == (MessageStatus.SUCCESS, "whole")
    assert await stored_seqs(run.message_id) == [1, 2, 3]  # the ids went on: each row once
    [start, resumed] = [r.body for r in fake.requests if r.path == "/run"]
    assert "resume" not in start
    assert resumed["resume"] == {"first_event_id": 2, "clarify": None, "messages": [
        {"role": "user", "content": "hi"}]}  # no step was done: the turn from its start


async def test_a_run_that_never_reached_the_bridge_is_started_again(db: str, skills_dir: Path):
    async with FakeBridge() as fake:
        pool, client = await _pool(fake.url, None, skills_dir)
        fake.fail("run", 503, times=1)  # the first attempt dies before the Bridge knows it
        run = await pool.start((await sessions.create_session()).id, "hi")
        await finished(pool, run.run_id)
        await pool.close()
        await message_status(run.message_id, MessageStatus.RUNNING)
        again, client2 = await _pool(fake.url, None, skills_dir)
        assert await recover(again) == 1
        done = await finished(again, run.run_id)
        await again.close()
        await client.aclose()
        await client2.aclose()
    assert done.status == MessageStatus.SUCCESS


async def message_status(message_id: int, status: MessageStatus) -> None:
    from core.store.models import ChatMessage

    await ChatMessage.filter(id=message_id).update(status=status, error=None)


async def test_old_and_overdue_pauses_expire(db: str, skills_dir: Path):
    async with FakeBridge() as fake:
        fake.default_script = lambda run_id: [
            ev("clarify_request", clarify_id=f"c-{run_id}", question="?", choices=[]),
            Stall(run_id), ev("done", final_text="x"),
        ]
        pool, client = await _pool(fake.url, None, skills_dir)
        run = await pool.start((await sessions.create_session()).id, "hi")
        await until(pool, run.run_id, lambda u: u.pause is not None)
        assert await enforce_clarify_fallback(pool, timedelta(hours=24)) == 0
        await ClarifyPause.filter(run_id=run.run_id).update(created_at=utc_now() - timedelta(days=2))
        assert await enforce_clarify_fallback(pool, timedelta(hours=24)) == 1
        stopped = await finished(pool, run.run_id)
        await ClarifyPause.create(run_id="old", message_id=run.message_id, clarify_id="ancient",
                                  question="?", created_at=utc_now() - timedelta(days=31))
        assert await expire_old_pauses() == 1
        await pool.close()
        await client.aclose()
    assert stopped.status == MessageStatus.STOPPED
    statuses = set(await ClarifyPause.all().values_list("status", flat=True))
    assert statuses == {PauseStatus.EXPIRED}


async def test_the_upkeep_jobs_are_scheduled_and_finished_runs_are_pruned(
    db: str, skills_dir: Path
):
    now = [0.0]
    async with FakeBridge() as fake:
        client = BridgeClient(fake.url, policy=FAST)
        pool = RunPool(client, catalogue_for(None, skills_dir), monotonic=lambda: now[0])
        await pool.open()
        scheduler = start_jobs(pool)
        try:
            jobs = {job.id for job in scheduler.get_jobs()}
            assert jobs == {"expire-pauses", "clarify-fallback", "prune", "sweep-quota", "sweep-events",
                            "sweep-budgets"}
            run = await pool.start((await sessions.create_session()).id, "hi")
            await finished(pool, run.run_id)
            now[0] = 299.0
            assert pool.prune() == 0 and pool.view(run.run_id) is not None
            now[0] = 301.0
            assert pool.prune() == 1 and pool.view(run.run_id) is None
        finally:
            scheduler.shutdown(wait=False)
            await pool.close()
            await client.aclose()


async def test_runs_the_bridge_executes_are_adopted_first_and_keep_their_slot_at_a_full_cap(
    db: str, fake_bridge: FakeBridge, skills_dir: Path
):
    queued = []
    for text in ("waiting one", "waiting two"):  # older, queued when their replica died
        session = (await sessions.create_session()).id
        queued.append(await records.insert_turn(session, f"q-{text[-3:]}", MessageStatus.QUEUED,
                                                text=text))
    executing = []
    for name in ("exec-a", "exec-b"):  # newer, still executing on the Bridge
        session = (await sessions.create_session()).id
        executing.append(await records.insert_turn(session, name, MessageStatus.RUNNING, text=name))
        fake_bridge.add_run(name, [ev("text", text="going on"), Stall(name),
                                   ev("done", final_text=f"{name} done")])
    fake_bridge.default_script = lambda run_id: [ev("done", final_text="started late")]
    async with opened_pool(fake_bridge.url, catalogue_for(None, skills_dir),
                           max_active_runs=1) as pool:  # a cap that two executing runs exceed
        assert await recover(pool) == 4
        for turn in executing:
            shown = await until(pool, turn.assistant.run_id, lambda u: u.state.last_seq == 1)
            assert shown.status == MessageStatus.RUNNING  # never pushed back into the queue
        for turn in queued:
            waiting = await until(pool, turn.assistant.run_id, lambda u: u.position is not None)
            assert waiting.status == MessageStatus.QUEUED
        assert not fake_bridge.requests_to("POST", "/run")  # nothing started past the cap
        for turn in executing:
            fake_bridge.release(turn.assistant.run_id)
        for turn in [*executing, *queued]:
            assert (await finished(pool, turn.assistant.run_id)).status == MessageStatus.SUCCESS
    [first, second] = [r.body["run_id"] for r in fake_bridge.requests_to("POST", "/run")]
    assert (first, second) == ("q-one", "q-two")  # the queue kept its order


CHECKPOINTED = [{"role": "user", "content": "job"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "call-1", "type": "function",
                     "function": {"name": "clarify", "arguments": "{\"question\": \"Which?\"}"}}]}]


async def test_a_question_whose_bridge_restarted_stays_open_until_the_fallback_ends_it(
    db: str, fake_bridge: FakeBridge, skills_dir: Path
):
    fake_bridge.default_script = lambda run_id: [
        ev("checkpoint", messages=CHECKPOINTED,
           clarify={"call_id": "call-1", "clarify_id": f"q-{run_id}"}),
        ev("clarify_request", clarify_id=f"q-{run_id}", question="Which?", choices=["a"]),
        WaitAnswer(f"q-{run_id}"), ev("done", final_text="x")]
    async with opened_pool(fake_bridge.url, catalogue_for(None, skills_dir)) as pool:
        run = await pool.start((await sessions.create_session()).id, "job")
        asked = await until(pool, run.run_id, lambda u: u.pause is not None)
        await fake_bridge.stop()
        fake_bridge.runs.clear()  # a new Bridge process: it knows neither the run nor the question
        await fake_bridge.start()
        async with asyncio.timeout(WAIT):  # the stream came back to a Bridge without the run
            while not [r for r in fake_bridge.requests_to("GET", f"/runs/{run.run_id}")]:
                await asyncio.sleep(0.02)
        waiting = pool.view(run.run_id)
        assert waiting.status == MessageStatus.RUNNING
        assert waiting.pause.status == PauseStatus.UNANSWERED  # no expiry on a restart
        assert (await ClarifyPause.get(clarify_id=asked.pause.clarify_id)).status == \
            PauseStatus.UNANSWERED

        assert await enforce_clarify_fallback(pool, timedelta(0)) == 1  # CLARIFY_FALLBACK_HOURS
        ended = await finished(pool, run.run_id)
    assert ended.status == MessageStatus.STOPPED
    assert (await ClarifyPause.get(clarify_id=asked.pause.clarify_id)).status == PauseStatus.EXPIRED
    starts = [r.body for r in fake_bridge.requests if r.path == "/run"]
    assert [body.get("resume") for body in starts] == [None]  # never continued without an answer


async def test_an_answer_taken_by_another_replica_continues_the_run_where_it_waits(
    db: str, fake_bridge: FakeBridge, skills_dir: Path
):
    fake_bridge.default_script = lambda run_id: [
        ev("checkpoint", messages=CHECKPOINTED,
           clarify={"call_id": "call-1", "clarify_id": f"q-{run_id}"}),
        ev("clarify_request", clarify_id=f"q-{run_id}", question="Which?", choices=["a"]),
        WaitAnswer(f"q-{run_id}"), ev("done", final_text="never")]
    catalogue = catalogue_for(None, skills_dir)
    async with opened_pool(fake_bridge.url, catalogue) as driving, \
            opened_pool(fake_bridge.url, catalogue) as other:  # two replicas, one database
        run = await driving.start((await sessions.create_session()).id, "job")
        asked = await until(driving, run.run_id, lambda u: u.pause is not None)
        await fake_bridge.stop()
        fake_bridge.runs.clear()  # the Bridge restarted: the run waits on its question here
        fake_bridge.default_script = lambda run_id: [
            ev("status", category="resumed", message="Resumed"), ev("done", final_text="a it is")]
        await fake_bridge.start()
        async with asyncio.timeout(WAIT):  # it found the run gone, and waits for the answer
            while not fake_bridge.requests_to("GET", f"/runs/{run.run_id}"):
                await asyncio.sleep(0.02)

        outcome = await other.answer(asked.pause.clarify_id, "a", "U2")  # a click on the other
        assert outcome.accepted and outcome.continued and other.live(run.run_id) is None
        done = await finished(driving, run.run_id)  # the replica with the lease goes on
    assert (done.status, done.state.final_text) == (MessageStatus.SUCCESS, "a it is")
    [resumed] = [r.body["resume"] for r in fake_bridge.requests if r.path == "/run"
                 and r.body.get("resume")]
    assert resumed["clarify"] == {"call_id": "call-1", "answer": "a"}
    assert resumed["messages"] == CHECKPOINTED and resumed["first_event_id"] == 3


async def test_a_run_queued_behind_its_sessions_run_waits_for_it_again_after_a_restart(
    db: str, skills_dir: Path
):
    async with FakeBridge() as fake:
        fake.default_script = lambda run_id: [ev("text", text="half"), Stall(run_id),
                                              ev("done", final_text=f"done {run_id}")]
        pool, client = await _pool(fake.url, None, skills_dir)
        session = (await sessions.create_session()).id
        first = await pool.start(session, "one")
        await until(pool, first.run_id, lambda u: u.state.last_seq == 1)
        queued = await pool.start(session, "two", queue=True)
        await pool.close()  # a restart: both stay in flight, the second still queued
        again, client2 = await _pool(fake.url, None, skills_dir)
        try:
            assert await recover(again) == 2
            waiting = await until(again, queued.run_id, lambda u: True)
            assert waiting.status == MessageStatus.QUEUED, "it started beside the first"
            fake.release(first.run_id)
            assert (await finished(again, first.run_id)).status == MessageStatus.SUCCESS
            await until(again, queued.run_id, lambda u: u.state.last_seq == 1)
            fake.release(queued.run_id)
            done = await finished(again, queued.run_id)
        finally:
            await again.close()
            await client.aclose()
            await client2.aclose()
    assert done.status == MessageStatus.SUCCESS
