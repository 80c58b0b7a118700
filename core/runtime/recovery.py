"""Recovery: re-attach every run left in flight.

At start-up, and then on every replica every half lease: a run whose owner stopped renewing its
lease (it died) is taken over by whichever replica claims the expired lease first. A run the
Bridge still executes is followed again; one the Bridge lost (it restarted too) goes on from its
last checkpoint (core/runtime/continuation.py). Runs the Bridge executes are adopted first and
hold their slot past the cap: a queued run never pushes them back into the queue.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import TYPE_CHECKING

from core.errors import BridgeUnavailable
from core.agent.events import Event, LogRecord, event_from_log, is_terminal
from core.store.models import (
    IN_FLIGHT, ChatMessage, ChatMessageLog, ClarifyPause, MessageStatus, PauseStatus, Role,
)
from core.runtime import records
from core.runtime.clarify import view
from core.runtime.live import LiveRun
from core.runtime.runner import RunOptions
from core.agent.thinking import answered, replay

if TYPE_CHECKING:
    from core.runtime.pool import RunPool

log = logging.getLogger(__name__)


async def recover(pool: RunPool) -> int:
    """Adopt every in-flight assistant message this process does not drive yet."""
    messages = await ChatMessage.filter(
        role=Role.ASSISTANT, status__in=IN_FLIGHT, run_id__isnull=False
    ).order_by("id").select_related("session", "parent")
    async with pool.recovery_lock:
        held = await pool.leases.held_by_others()
        plans: list[tuple[LiveRun, RunOptions]] = []
        for message in messages:
            if message.run_id is None or message.run_id in held or pool.live(message.run_id):
                continue  # a live replica drives it, or we do
            if (plan := await _recover_one(pool, message)) is not None:
                plans.append(plan)
        for live, options in sorted(plans, key=_precedence):  # stable: oldest first in each
            pool.adopt(live, _after_its_predecessor(pool, live, options))
            pool.publish(live)  # adapters show the live message (and any clarify buttons) again
    return len(plans)


def _precedence(plan: tuple[LiveRun, RunOptions]) -> int:
    """Runs the Bridge executes first, then those that only need their end written, then
    those continued from a checkpoint, then those that never started."""
    _, options = plan
    if options.follow:
        return 0
    if options.ended is not None:
        return 1
    return 2 if options.resume else 3


def _after_its_predecessor(pool: RunPool, live: LiveRun, options: RunOptions) -> RunOptions:
    """A run queued behind its session's run (`queue=True`) waits for that one again when
    both are adopted here (the one it waits for is adopted first: it runs, or queued earlier)."""
    ahead = live.turn.assistant.queued_behind
    previous = pool.live(ahead) if ahead else None
    if previous is None or options.after is not None:
        return options
    return replace(options, after=pool.done_future(previous))


async def keep_taking_over(pool: RunPool) -> None:
    """Every half lease, adopt the runs of replicas whose leases expired; until cancelled.

    Every replica scans, not only the leader: a dead replica's runs move within about one and
    a half leases of its last renewal, whichever replica died (the leader included), and a
    scan costs two indexed queries.
    """
    every = pool.leases.ttl.total_seconds() / 2
    while True:
        await asyncio.sleep(every)
        try:
            adopted = await recover(pool)
        except Exception:  # the database is away: the next scan tries again
            log.warning("takeover scan failed; will retry", exc_info=True)
            continue
        if adopted:
            log.info("runtime: took over %d runs whose replica stopped renewing them", adopted)


async def _recover_one(pool: RunPool, message: ChatMessage) -> tuple[LiveRun, RunOptions] | None:
    """The run rebuilt and how to drive it, with its lease claimed; None if it is not ours."""
    run_id = message.run_id
    if run_id is None or not await pool.leases.claim(run_id):
        return None  # a live replica drives it
    try:
        known = (await pool.bridge.run_state(run_id)).state != "unknown"
    except BridgeUnavailable as error:
        log.warning("recovery postponed, Bridge unreachable: %s", error.message,
                    extra={"run_id": run_id})
        await pool.leases.release([run_id])
        return None
    live, end = await _rebuild(message)
    pool.buffer.remember(message.id, live.state.last_seq)
    if end is not None:  # the database went away after storing its end, before its status
        return live, RunOptions(ended=end)
    if known:
        return live, RunOptions(follow=True)
    if live.state.last_seq == 0:
        return live, RunOptions()  # nothing of it was seen yet: (re)start it now
    return live, RunOptions(resume=True)  # the Bridge lost it: on from its checkpoint


async def _rebuild(message: ChatMessage) -> tuple[LiveRun, Event | None]:
    """The run as its stored log left it, and its stored done/error event if it has one."""
    rows = await ChatMessageLog.filter(message_id=message.id).order_by("seq")
    logged = [LogRecord(seq=r.seq, kind=r.kind, content=r.content, tool_name=r.tool_name,
                        meta_json=r.meta_json, created_at=r.created_at) for r in rows]
    state = replay(logged)
    if message.parent is None or message.run_id is None:
        raise ValueError(f"assistant message {message.id} has no question or no run")
    turn = records.Turn(message.session, message.parent, message)
    live = LiveRun(message.run_id, turn, MessageStatus(message.status), state,
                   shown_seq=state.last_seq)
    pause = await ClarifyPause.filter(run_id=message.run_id).order_by("-id").first()
    if pause is not None:
        live.show(view(pause))
        if pause.status != PauseStatus.UNANSWERED:
            live.state = answered(live.state, pause.clarify_id)
    return live, _stored_end(logged) if state.terminal else None


def _stored_end(logged: list[LogRecord]) -> Event | None:
    for record in reversed(logged):
        if is_terminal(event := event_from_log(record)):
            return event
    return None
