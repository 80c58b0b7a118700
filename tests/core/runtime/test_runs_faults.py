"""Runs against a fault-injecting Bridge: drops, repeats, garbage, errors, stalls, the cap."""

from __future__ import annotations

import asyncio

import pytest

from core.agent.bridge.client import BridgeClient
from core.chat import sessions, tree
from core.errors import BridgeUnavailable
from core.runtime.pool import RunPool
from core.store.models import ChatMessage, ChatSession, ClarifyPause, MessageStatus, PauseStatus, Role
from tests.bridge.harness import wait_until
from tests.core.runtime.waiting import finished, message, stored_seqs, until
from tests.fakes.fake_bridge import Drop, FakeBridge, Raw, Repeat, Stall, WaitAnswer, ev
from tests.support.runtime import FAST, catalogue_for


def posted_runs(fake: FakeBridge) -> list[str]:
    return [r.body["run_id"] for r in fake.requests if r.method == "POST" and r.path == "/run"]


def talk(count: int) -> list:
    return [ev("text", text=f"word{i} ") for i in range(count)]


async def test_a_stream_dropped_three_times_loses_and_doubles_nothing(
    fake_pool: RunPool, fake_bridge: FakeBridge
):
    fake_bridge.default_script = lambda run_id: [
        *talk(5), Drop(), *talk(5), Drop(abrupt=True), *talk(5), Drop(), ev("done", final_text="ok")
    ]
    s = (await sessions.create_session()).id
    done = await finished(fake_pool, (await fake_pool.start(s, "talk")).run_id)
    assert done.status == MessageStatus.SUCCESS
    assert await stored_seqs(done.message_id) == list(range(1, 17))
    assert str(done.state.thinking).count("word") == 15
    assert len(fake_bridge.requests_to("GET", "/runs/")) >= 3


async def test_repeated_and_malformed_events_are_skipped(fake_pool: RunPool, fake_bridge: FakeBridge):
    fake_bridge.default_script = lambda run_id: [
        *talk(3), Repeat(2), Raw("event: text\ndata: {not json\nid: 4\n\n"),
        Raw("event: mystery\ndata: {}\nid: 4\n\n"), *talk(2), ev("done", final_text="ok"),
    ]
    s = (await sessions.create_session()).id
    done = await finished(fake_pool, (await fake_pool.start(s, "talk")).run_id)
    assert done.status == MessageStatus.SUCCESS
    assert await stored_seqs(done.message_id) == [1, 2, 3, 4, 5, 6]


async def test_a_bridge_that_answers_500_fails_the_run_readably(
    fake_pool: RunPool, fake_bridge: FakeBridge, caplog: pytest.LogCaptureFixture
):
    fake_bridge.fail("run", 500)
    s = (await sessions.create_session()).id
    failed = await finished(fake_pool, (await fake_pool.start(s, "hello")).run_id)
    assert failed.status == MessageStatus.FAILED
    assert failed.error == BridgeUnavailable.PUBLIC  # plain words for people
    assert any("500" in r.getMessage() and "POST /run" in r.getMessage()
               for r in caplog.records if r.name == "core.runtime.runner")  # the log, details
    ok = await finished(fake_pool, (await fake_pool.start(s, "hello again")).run_id)
    assert ok.status == MessageStatus.SUCCESS


async def test_a_bridge_that_is_down_fails_the_run_and_the_session_stays_usable(db: str, skills_dir):
    async with BridgeClient("http://127.0.0.1:9", policy=FAST) as client:
        pool = RunPool(client, catalogue_for(None, skills_dir))
        await pool.open()
        s = (await sessions.create_session()).id
        failed = await finished(pool, (await pool.start(s, "anyone there?")).run_id)
        await pool.close()
    assert failed.status == MessageStatus.FAILED and "unreachable" in failed.error
    assert (await message(failed.message_id)).error == failed.error
    assert await ChatSession.filter(id=s).exists()


async def test_the_cap_queues_runs_in_order(fake_pool: RunPool, fake_bridge: FakeBridge):
    fake_bridge.default_script = lambda run_id: [Stall(run_id), ev("done", final_text=run_id)]
    ids = [(await sessions.create_session()).id for _ in range(4)]
    runs = [await fake_pool.start(s, f"job {n}") for n, s in enumerate(ids)]
    assert [r.status for r in runs] == [MessageStatus.RUNNING] * 2 + [MessageStatus.QUEUED] * 2
    third = await until(fake_pool, runs[2].run_id, lambda u: u.position == 1)
    fourth = await until(fake_pool, runs[3].run_id, lambda u: u.position == 2)
    assert (third.status, fourth.status) == (MessageStatus.QUEUED, MessageStatus.QUEUED)
    assert (await message(runs[3].message_id)).status == MessageStatus.QUEUED

    fake_bridge.release(runs[1].run_id)
    await finished(fake_pool, runs[1].run_id)
    assert (await until(fake_pool, runs[3].run_id, lambda u: u.position == 1)).position == 1
    await wait_until(lambda: len(posted_runs(fake_bridge)) == 3)
    started = posted_runs(fake_bridge)
    # the first two start side by side (their POSTs may cross); the queue's head comes next
    assert set(started[:2]) == {runs[0].run_id, runs[1].run_id} and started[2] == runs[2].run_id
    for run in runs:
        fake_bridge.release(run.run_id)
    for run in runs:
        assert (await finished(fake_pool, run.run_id)).status == MessageStatus.SUCCESS
    started = posted_runs(fake_bridge)
    assert started == [r.run_id for r in runs]


async def test_stopping_a_queued_run_never_reaches_the_bridge(fake_pool: RunPool, fake_bridge: FakeBridge):
    fake_bridge.default_script = lambda run_id: [Stall(run_id), ev("done", final_text="x")]
    runs = [await fake_pool.start((await sessions.create_session()).id, "job") for _ in range(3)]
    stopped = await fake_pool.stop(runs[2].run_id)
    assert stopped.status == MessageStatus.STOPPED
    assert (await message(runs[2].message_id)).status == MessageStatus.STOPPED
    running = await fake_pool.stop(runs[0].run_id)
    assert (await finished(fake_pool, running.run_id)).status == MessageStatus.STOPPED
    fake_bridge.release(runs[1].run_id)
    await finished(fake_pool, runs[1].run_id)
    posted = set(posted_runs(fake_bridge))
    assert runs[2].run_id not in posted


async def test_a_subscriber_that_never_reads_neither_slows_a_run_nor_grows(
    fake_pool: RunPool, fake_bridge: FakeBridge
):
    fake_bridge.default_script = lambda run_id: [*talk(3000), ev("done", final_text="long")]
    stalled = fake_pool.subscribe()  # never read
    s = (await sessions.create_session()).id
    run = await fake_pool.start(s, "talk a lot")
    async with asyncio.timeout(20):
        done = await finished(fake_pool, run.run_id)
    assert done.status == MessageStatus.SUCCESS
    assert len(stalled._pending) == 1  # one latest update per run, whatever happened
    assert (await stalled.next())[0].finished
    assert len(await stored_seqs(done.message_id)) == 3001


async def test_compaction_adds_a_summary_in_the_branch(fake_pool: RunPool, fake_bridge: FakeBridge):
    s = (await sessions.create_session()).id
    first = await finished(fake_pool, (await fake_pool.start(s, "one")).run_id)
    fake_bridge.default_script = lambda run_id: [
        ev("context_compacted", summary="They said one.", compacted_until=2),
        ev("done", final_text="two"),
    ]
    second = await finished(fake_pool, (await fake_pool.start(s, "two")).run_id)
    assert len(second.summary_ids) == 1
    summary = await ChatMessage.get(id=second.summary_ids[0])
    assert (summary.role, summary.status, summary.content) == (Role.SYSTEM, MessageStatus.SUMMARY,
                                                               "They said one.")
    assert summary.parent_id == first.message_id
    branch = [m.id for m in await tree.active_branch(s)]
    assert branch == [first.user_message_id, first.message_id, summary.id,
                      second.user_message_id, second.message_id]
    assert (await sessions.get_session(s)).last_summarized_at is not None
    fake_bridge.default_script = lambda run_id: [ev("done", final_text="three")]
    await finished(fake_pool, (await fake_pool.start(s, "three")).run_id)
    history = [r for r in fake_bridge.requests if r.path == "/run"][-1].body["history"]
    assert history[0] == {"role": "system",
                          "content": "Summary of the earlier conversation:\nThey said one."}
    assert [h["content"] for h in history[1:]] == ["two", "two"]


async def test_a_long_queue_wakes_a_waiting_run_only_for_halvings_and_the_last_places(
    fake_pool: RunPool, fake_bridge: FakeBridge
):
    """Hundreds queued: each finished run moves every waiting one, and re-rendering each
    waiting message every time would spend the platforms' edit budgets on queue places."""
    fake_bridge.default_script = lambda run_id: [Stall(run_id), ev("done", final_text=run_id)]
    ids = [(await sessions.create_session()).id for _ in range(24)]
    runs = [await fake_pool.start(s, f"job {n}") for n, s in enumerate(ids)]
    last = runs[-1]
    assert (await until(fake_pool, last.run_id, lambda u: u.position == 22)).position == 22
    seen: list[int | None] = []

    async def watch() -> None:
        async for update in fake_pool.subscribe(last.run_id):
            seen.append(update.position)

    watcher = asyncio.create_task(watch())
    for n, run in enumerate(runs[:-1]):
        fake_bridge.release(run.run_id)
        await finished(fake_pool, run.run_id)
        await wait_until(lambda: fake_pool.view(last.run_id).position == max(1, 21 - n)
                         or fake_pool.view(last.run_id).position is None)  # exact when asked
    fake_bridge.release(last.run_id)
    assert (await finished(fake_pool, last.run_id)).status == MessageStatus.SUCCESS
    watcher.cancel()
    places = [p for p in dict.fromkeys(seen) if p is not None]
    assert places == [22, 11, 5, 3, 2, 1], seen  # where it was queued, then halvings


async def test_a_question_the_bridge_closed_expires_when_answered(
    fake_pool: RunPool, fake_bridge: FakeBridge
):
    # the Bridge gave up on the question (its fallback passed) while the run looks alive here
    fake_bridge.default_script = lambda run_id: [
        ev("clarify_request", clarify_id=f"q-{run_id}", question="Which?", choices=["a"]),
        WaitAnswer(f"q-{run_id}"), ev("done", final_text="x")]
    run = await fake_pool.start((await sessions.create_session()).id, "job")
    asked = await until(fake_pool, run.run_id, lambda u: u.pause is not None)
    fake_bridge.fail("answer", 409, code="already_answered")
    outcome = await fake_pool.answer(asked.pause.clarify_id, "a", "U7")
    assert not outcome.accepted and outcome.reason == "this question expired: the run is over"
    pause = await ClarifyPause.get(clarify_id=asked.pause.clarify_id)
    assert pause.status == PauseStatus.EXPIRED  # not claimed by an answer that went nowhere
    await fake_pool.stop(run.run_id)
