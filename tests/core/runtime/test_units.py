"""The runtime's pure and in-memory pieces: slots, subscriptions, history folding."""

from __future__ import annotations

import asyncio

from core.agent.bridge.types import HistoryMessage
from core.agent.thinking import ThinkingState
from core.runtime.history import SUMMARY_PREFIX, _path_with_summaries, fold_history
from core.runtime.slots import RunSlots
from core.runtime.updates import Hub, RunUpdate
from core.store.models import ChatMessage, MessageStatus, Role


async def test_slots_admit_in_fifo_order_and_report_positions() -> None:
    moves: list[tuple[str, int]] = []
    slots = RunSlots(1, on_moved=lambda run, pos: moves.append((run, pos)))
    assert slots.try_take("a")
    waiters = [asyncio.create_task(slots.take(r)) for r in ("b", "c", "d")]
    await asyncio.sleep(0)  # let the three enqueue
    assert [slots.position(r) for r in "bcd"] == [1, 2, 3]
    waiters[1].cancel()  # "c" gives up while waiting
    await asyncio.gather(waiters[1], return_exceptions=True)
    assert slots.queued == ["b", "d"] and slots.position("d") == 2
    slots.release("a")
    await waiters[0]
    assert slots.queued == ["d"] and slots.position("d") == 1 and slots.active == 1
    slots.release("b")
    await waiters[2]
    assert slots.active == 1 and ("d", 1) in moves


def _update(run_id: str, status: MessageStatus = MessageStatus.RUNNING, seq: int = 0) -> RunUpdate:
    return RunUpdate(run_id, 1, 1, 2, status, ThinkingState(last_seq=seq))


async def test_a_subscription_keeps_only_the_latest_update_of_each_run() -> None:
    hub = Hub()
    everything, one = hub.subscribe(), hub.subscribe("r1")
    for seq in range(1000):
        hub.publish(_update("r1", seq=seq))
    hub.publish(_update("r2", seq=5))
    batch = await everything.next()
    assert [(u.run_id, u.state.last_seq) for u in batch] == [("r1", 999), ("r2", 5)]
    assert [u.state.last_seq for u in await one.next()] == [999]
    hub.publish(_update("r1", MessageStatus.SUCCESS, 1000))
    assert [u.status async for u in one] == [MessageStatus.SUCCESS]  # ends after the last one


def _msg(ident: int, role: Role, content: str, status=MessageStatus.SENT) -> ChatMessage:
    return ChatMessage(id=ident, role=role, content=content, status=status)


def test_history_keeps_finished_answers_and_starts_at_the_last_summary() -> None:
    path = [
        _msg(1, Role.USER, "hi"), _msg(2, Role.ASSISTANT, "hello", MessageStatus.SUCCESS),
        _msg(3, Role.SYSTEM, "they greeted", MessageStatus.SUMMARY),
        _msg(4, Role.USER, "again"), _msg(5, Role.ASSISTANT, "", MessageStatus.FAILED),
        _msg(6, Role.USER, "and?"),
    ]
    assert fold_history(path) == [
        (3, HistoryMessage("system", SUMMARY_PREFIX + "they greeted")),
        (4, HistoryMessage("user", "again")), (6, HistoryMessage("user", "and?")),
    ]


def test_the_path_follows_parents_and_places_summaries_after_their_parent() -> None:
    links = [(1, None, "USER", True), (2, 1, "ASSISTANT", False), (3, 1, "ASSISTANT", True),
             (4, 3, "SYSTEM", True), (5, 3, "USER", True), (6, 2, "USER", True)]
    assert _path_with_summaries(links, 5) == [1, 3, 4, 5]
    assert _path_with_summaries(links, 6) == [1, 2, 6]
    assert _path_with_summaries(links, None) == []

