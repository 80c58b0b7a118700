"""Following a run's events from any point: stored, then live, each once, in order."""

from __future__ import annotations

import asyncio
from contextlib import aclosing

import pytest

from core.agent.events import ApprovalRequest
from core.chat import sessions
from core.errors import NotFound
from core.runtime.approvals import find_approval
from core.runtime.follow import follow_events
from core.runtime.live import event_size
from core.runtime.pool import RunPool
from tests.core.runtime.waiting import finished, until
from tests.fakes.fake_bridge import FakeBridge, Stall, ev


async def _collect(pool: RunPool, run_id: str, after: int = 0) -> list[int]:
    return [event.seq async for event in follow_events(pool, run_id, after)]


async def test_followers_get_every_event_once_from_where_they_ask(
    fake_pool: RunPool, fake_bridge: FakeBridge
) -> None:
    fake_bridge.default_script = lambda run_id: [
        *(ev("text", text=f"t{i}") for i in range(5)), Stall(run_id),
        *(ev("text", text=f"u{i}") for i in range(5)), ev("done", final_text="ok"),
    ]
    run = await fake_pool.start((await sessions.create_session()).id, "go")
    await until(fake_pool, run.run_id, lambda u: u.state.last_seq == 5)
    from_start = asyncio.create_task(_collect(fake_pool, run.run_id))
    from_three = asyncio.create_task(_collect(fake_pool, run.run_id, after=3))
    fake_bridge.release(run.run_id)
    assert await from_start == list(range(1, 12))
    assert await from_three == list(range(4, 12))
    await finished(fake_pool, run.run_id)
    assert await _collect(fake_pool, run.run_id, after=9) == [10, 11]  # a late reconnect


async def test_a_run_this_process_does_not_know_is_followed_from_the_log(
    fake_pool: RunPool, fake_bridge: FakeBridge
) -> None:
    run = await fake_pool.start((await sessions.create_session()).id, "go")
    await finished(fake_pool, run.run_id)
    fake_pool._runs.clear()  # as if another replica had driven it
    assert await _collect(fake_pool, run.run_id) == [1]
    with pytest.raises(NotFound):
        await _collect(fake_pool, "no-such-run")


async def test_a_live_run_keeps_its_buffer_of_events_and_followers_still_get_every_one(
    fake_pool: RunPool, fake_bridge: FakeBridge
) -> None:
    fake_pool.run_buffer_bytes = 4096  # RUN_BUFFER_BYTES
    fake_bridge.default_script = lambda run_id: [
        *(ev("text", text=f"t{i:04}") for i in range(3000)), Stall(run_id),
        *(ev("text", text=f"u{i}") for i in range(10)), ev("done", final_text="ok"),
    ]
    run = await fake_pool.start((await sessions.create_session()).id, "go")
    await until(fake_pool, run.run_id, lambda u: u.state.last_seq == 3000)
    await fake_pool.buffer.flush()  # stored: the oldest may now leave memory
    fake_bridge.release(run.run_id)
    await finished(fake_pool, run.run_id)
    live = fake_pool.live(run.run_id)
    assert live is not None and live.event_bytes == sum(event_size(e) for e in live.events)
    assert live.event_bytes <= 4096 and live.events[-1].seq == 3011
    assert await _collect(fake_pool, run.run_id) == list(range(1, 3012))  # the rest from the log


async def test_a_follower_is_shown_a_question_only_once_it_is_stored(
    fake_pool: RunPool, fake_bridge: FakeBridge
) -> None:
    """A follower woken by one event must not read the next before that one's step is done: an
    approval shown before its row was written was answered "no tool approval" (the terminal
    chat, under load). Each event reaches the follower with its question already stored."""
    fake_bridge.default_script = lambda run_id: [
        *(item for i in range(20) for item in (
            ev("text", text=f"step {i}"),
            ev("approval_request", approval_id=f"a-{i}", command=f"rm -rf /tmp/{i}",
               reason="recursive delete", choices=["once", "deny"]))),
        Stall(run_id), ev("done", final_text="ok"),
    ]
    run = await fake_pool.start((await sessions.create_session()).id, "go")
    seen = 0
    async with aclosing(follow_events(fake_pool, run.run_id)) as events:
        async for event in events:
            if isinstance(event, ApprovalRequest):
                assert await find_approval(event.approval_id), event.approval_id
                seen += 1
                if seen == 20:
                    break
    fake_bridge.release(run.run_id)
    await finished(fake_pool, run.run_id)
