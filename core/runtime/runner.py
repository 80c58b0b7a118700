"""Drive one run: wait for its turn, stream its events, persist, fold, publish, finish.

A run whose Bridge lost it (the Bridge process restarted) is continued on the Bridge that
answers now, from its last checkpoint (core/runtime/continuation.py), instead of failing.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from core.errors import (
    BridgeUnavailable, DatabaseUnavailable, HermesChatError, NotFound, RunLost,
)
from core.agent.events import (
    ApprovalRequest, Checkpoint, ClarifyRequest, ContextCompacted, Done, Event, RunError, Step,
    Usage,
)
from core.store.models import ENDED, MessageStatus, PauseKind
from core.runtime import records, spending
from core.runtime.approvals import find_approval, persist_approval
from core.runtime.clarify import find_pause, persist_pause, view
from core.runtime.continuation import continue_run
from core.runtime.context import RunContext
from core.runtime.live import LiveRun
from core.runtime.requests import build_request
from core.runtime.updates import PauseView


log = logging.getLogger(__name__)
YIELD_EVERY = 64  # events handled before the event loop gets a turn (a burst's one wait)
MAX_CONTINUATIONS = 3  # a turn that loses its Bridge more often in one process fails


@dataclass(frozen=True, slots=True)
class RunOptions:
    max_iterations: int | None = None
    follow: bool = False  # re-attach to a run the Bridge already has (recovery)
    after: asyncio.Future[None] | None = None  # the session's previous run (queued starts)
    ended: Event | None = None  # recovery: its done/error is stored, its status is not yet
    resume: bool = False  # recovery: the Bridge lost it; continue it from its checkpoint


async def drive(pool: RunContext, live: LiveRun, options: RunOptions) -> None:
    """The whole life of a run in this process; cancellation, or a database away for longer
    than the pool's patience, leaves it resumable."""
    extra = {"run_id": live.run_id, "session_id": live.session_id}
    try:
        if options.after is not None:
            await asyncio.shield(options.after)
        if options.follow:  # the Bridge executes it already: it keeps its slot
            pool.slots.hold(live.run_id)
        if await _wait_for_slot(pool, live):
            await _stream(pool, live, options)
    except asyncio.CancelledError:
        await _flush_quietly(pool)
        raise
    except DatabaseUnavailable as error:
        _left_for_recovery(pool, live, error)
    except HermesChatError as error:  # the details to the log, plain words to people
        log.warning("run failed: %s", error.message, extra=extra)
        await _fail(pool, live, error.public)
    except Exception:
        log.exception("run crashed", extra=extra)
        await _fail(pool, live, "An internal error ended this run; it was logged.")
    finally:
        pool.slots.release(live.run_id)
        if live.finished_at is not None:
            await pool.leases.release([live.run_id])


async def _wait_for_slot(pool: RunContext, live: LiveRun) -> bool:
    """Take a slot, waiting in the queue if the cap is full; False when the run was stopped
    while it waited (Stop on another replica can only record that: no Bridge had it yet)."""
    if not pool.slots.try_take(live.run_id):
        if live.status != MessageStatus.QUEUED:
            live.status = MessageStatus.QUEUED
            await pool.durably(records.set_status, live.message_id, MessageStatus.QUEUED)
        live.position = live.announced_position = pool.slots.position(live.run_id)
        pool.publish(live)
        await pool.slots.take(live.run_id)
    live.position = None
    if live.status != MessageStatus.RUNNING:
        if not await pool.durably(records.leave_queue, live.message_id):
            live.status, live.error = await pool.durably(records.ended_status, live.message_id)
            pool.finished(live)
            return False
        live.status = MessageStatus.RUNNING
    pool.publish(live)
    return True


async def _stream(pool: RunContext, live: LiveRun, options: RunOptions) -> None:
    """The run's events until its end; each time the Bridge loses the run, it goes on from
    its last checkpoint on the Bridge that answers now."""
    events = await _first_events(pool, live, options)
    for continuations in range(MAX_CONTINUATIONS + 1):
        try:
            await _consume(pool, live, events)
            return
        except RunLost as lost:
            if continuations == MAX_CONTINUATIONS:
                raise
            log.warning("run lost by the Bridge (%s); continuing it from its last checkpoint",
                        lost.message, extra={"run_id": live.run_id})
            events = await continue_run(pool, live, options.max_iterations)


async def _first_events(pool: RunContext, live: LiveRun, options: RunOptions) -> AsyncIterator[Event]:
    last = lambda: pool.buffer.persisted_seq(live.message_id)  # noqa: E731
    if options.ended is not None:  # nothing more will come from the Bridge: just finish it
        return _only(options.ended)
    if options.follow:
        return pool.bridge.follow(live.run_id, last)
    if options.resume:
        return await continue_run(pool, live, options.max_iterations)
    request = await pool.durably(build_request, live, pool.catalogue, options.max_iterations,
                                   pool.history_attachment_bytes)
    return pool.bridge.stream(request, last)


async def _consume(pool: RunContext, live: LiveRun, events: AsyncIterator[Event]) -> None:
    """Drive the run from `events`; the stream is closed on the way out (its `done` is the last
    event read: left to the garbage collector, its HTTP response stayed open until then, and the
    collector's closing of its nested generators raced one another)."""
    try:
        await _drive(pool, live, events)
    finally:
        close = getattr(events, "aclose", None)
        if close is not None:
            await close()


async def _drive(pool: RunContext, live: LiveRun, events: AsyncIterator[Event]) -> None:
    buffer, metrics, message_id = pool.buffer, pool.metrics, live.message_id
    async for event in events:  # the hot path: most events are only stored, folded, published
        if type(event) is Checkpoint:  # kept for a continuation; no row, nothing to show
            buffer.checkpoint(message_id, event)
            live.checkpoint_seq = event.seq
            continue
        if type(event) is Usage:  # stored, shown and exported with its cost at today's price
            event = spending.priced(pool.catalogue, live, event)
        buffer.add(message_id, event)
        live.fold(event)
        if live.event_bytes > pool.run_buffer_bytes:
            live.trim_events(buffer.persisted_seq(message_id), pool.run_buffer_bytes)
        metrics.events += 1
        if metrics.events % YIELD_EVERY == 0:
            # A burst already received is read without the loop ever waiting on the network:
            # let the flusher, the database's answers and the other runs have their turn.
            await asyncio.sleep(0)
        if (live.pause is not None or live.approval is not None) and type(event) not in _ASKS:
            for held in live.unanswered_pauses():
                if held.pause_id not in live.pauses_reread or type(event) in (Done, RunError):
                    await _answered_elsewhere(pool, live, held)
        step = _STEPS.get(type(event))
        if step is not None:
            await step(pool, live, event)
        live.shown_seq = event.seq
        if step is not None and live.status in ENDED:
            pool.finished(live)
            return
        pool.publish(live)
    raise BridgeUnavailable("the event stream ended before the run finished")


async def _only(event: Event) -> AsyncIterator[Event]:
    yield event


async def _clarify(pool: RunContext, live: LiveRun, event: ClarifyRequest) -> None:
    await pool.durably(pool.buffer.flush)
    live.pause = await pool.durably(persist_pause, live.run_id, live.message_id, event)


async def _answered_elsewhere(pool: RunContext, live: LiveRun, held: PauseView) -> None:
    """The run goes on while its clarify question or tool approval looks unanswered here:
    another replica took the answer (a click that reached it). Hold the pause as stored, so
    that what this replica shows says who answered, not that nobody did (nor that it expired)."""
    live.pauses_reread.add(held.pause_id)  # once when it goes on, once more at its end
    find = find_approval if held.kind == PauseKind.APPROVAL else find_pause
    stored = await pool.durably(find, None, held.pause_id)
    live.show(view(stored))


async def _approval(pool: RunContext, live: LiveRun, event: ApprovalRequest) -> None:
    await pool.durably(pool.buffer.flush)
    live.approval = await pool.durably(persist_approval, live.run_id, live.message_id, event)


async def _done(pool: RunContext, live: LiveRun, event: Done) -> None:
    await pool.durably(pool.buffer.flush)
    await pool.durably(records.finish_success, live.turn, event.final_text)
    live.status = MessageStatus.SUCCESS


async def _error(pool: RunContext, live: LiveRun, event: RunError) -> None:
    await pool.durably(pool.buffer.flush)
    await _ended_in_error(pool, live, event)


async def _usage(pool: RunContext, live: LiveRun, event: Usage) -> None:
    await spending.record(pool, live, event)


async def _step(pool: RunContext, live: LiveRun, event: Step) -> None:
    await spending.enforce(pool, live)  # the step's model call is about to be made


async def _compacted(pool: RunContext, live: LiveRun, event: ContextCompacted) -> None:
    """Hang the summary under the last message it replaced (or the run's user message)."""
    index = (event.compacted_until or 0) - 1
    ids = live.history_ids
    after = ids[index] if 0 <= index < len(ids) else live.turn.user.id
    try:
        node = await pool.durably(records.add_compaction, live.turn, after, event.summary)
    except NotFound:
        node = await pool.durably(records.add_compaction, live.turn, live.turn.user.id,
                                  event.summary)
    live.summary_ids = (*live.summary_ids, node.id)


async def _ended_in_error(pool: RunContext, live: LiveRun, event: RunError) -> None:
    if event.code == "aborted" and live.limit_stop is not None:
        status, error = MessageStatus.FAILED, live.limit_stop
    elif event.code == "aborted":
        status, error = MessageStatus.STOPPED, "Stopped."
    else:
        status, error = MessageStatus.FAILED, event.message
    # Stored first: a subscriber reading the run's view meanwhile must not see it ended
    # while the database still says it runs.
    await pool.durably(records.set_status, live.message_id, status, error=error)
    live.status, live.error = status, error


async def _fail(pool: RunContext, live: LiveRun, reason: str) -> None:
    await _flush_quietly(pool)
    try:
        await pool.durably(records.set_status, live.message_id, MessageStatus.FAILED, error=reason)
    except DatabaseUnavailable as error:
        _left_for_recovery(pool, live, error)
        return
    live.status = MessageStatus.FAILED
    live.error = reason
    pool.finished(live)


def _left_for_recovery(pool: RunContext, live: LiveRun, error: DatabaseUnavailable) -> None:
    log.error("run left in flight for recovery: %s", error.message,
              extra={"run_id": live.run_id, "session_id": live.session_id})
    pool.let_go(live)


async def _flush_quietly(pool: RunContext) -> None:
    try:
        await pool.buffer.flush()
    except Exception:  # the rows stay queued for the next flush
        log.warning("could not flush the log buffer", exc_info=True)


_ASKS = (ClarifyRequest, ApprovalRequest)  # the events that put a pause on

# What an event does beyond its row, its fold and the update (the other kinds: nothing).
_STEPS: dict[type, Callable[[RunContext, LiveRun, Any], Awaitable[None]]] = {
    ClarifyRequest: _clarify, ApprovalRequest: _approval, ContextCompacted: _compacted,
    Usage: _usage, Step: _step, Done: _done, RunError: _error,
}
