"""RunPool: the one way to start, stop, answer and watch runs.

One run per session at a time (a second start is refused as busy, or queued behind the
first when asked); a global cap with a FIFO queue beyond it; many sessions in parallel.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar

from core.chat import sessions, tree
from core.agent.bridge.port import Bridge
from core.agent.catalogue import Catalogue
from core.chat.channel_settings import ChannelDefaults
from core.chat.policy import Policy
from core.errors import Busy, InvalidInput, NotFound
from core.store.models import IN_FLIGHT, MessageStatus
from core.store.outage import Patience, is_outage, outlast
from core.edge.run_quota import RunQuota
from core.runtime import records
from core.runtime.approvals import decide, find_approval
from core.runtime.clarify import ClarifyOutcome, answer_pause, find_pause
from core.chat.attachments import HISTORY_ATTACHMENT_BYTES
from core.runtime.leases import Leases
from core.runtime.live import LiveRun
from core.runtime.log_buffer import LogBuffer
from core.runtime.metrics import RunMetrics
from core.runtime.notify import LogNotices
from core.runtime.runner import RunOptions, drive
from core.runtime.slots import RunSlots
from core.runtime.updates import Hub, RunUpdate, Subscription
from core.usage.limits import SpendLimits
from core.usage.spenders import Spender, spender_of

log = logging.getLogger(__name__)
FINISHED_TTL = 300.0  # seconds a finished run stays in memory for late subscribers
RUN_BUFFER_BYTES = 262144  # RUN_BUFFER_BYTES: events of a live run kept for admin followers
P = ParamSpec("P")
T = TypeVar("T")


def new_run_id() -> str:
    """A run's id (the Bridge's and every platform's name for it), chosen by whoever starts it:
    an adapter may show it (a Stop button) before the run is written (`start(run_id=...)`)."""
    return uuid.uuid4().hex


class RunPool:
    """Runs of this process; built once at the composition root, closed on shutdown."""

    def __init__(self, bridge: Bridge, catalogue: Catalogue, *, max_active_runs: int = 5,
                 buffer: LogBuffer | None = None, leases: Leases | None = None,
                 metrics: RunMetrics | None = None, log_notices: LogNotices | None = None,
                 patience: Patience = Patience(),
                 quota: RunQuota | None = None, limits: SpendLimits | None = None,
                 run_buffer_bytes: int = RUN_BUFFER_BYTES,
                 history_attachment_bytes: int = HISTORY_ATTACHMENT_BYTES,
                 channel_defaults: ChannelDefaults | None = None,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.bridge = bridge
        self.catalogue = catalogue
        self.metrics = metrics or RunMetrics()
        self.buffer = buffer or LogBuffer(on_flush=self.metrics.flushed)
        self.hub = Hub()
        self.slots = RunSlots(max_active_runs, on_moved=self._moved)
        self.leases = leases or Leases()
        self.log_notices = log_notices or LogNotices()  # wakes followers of other replicas' runs
        self.patience = patience
        self.quota = quota or RunQuota(0)  # RUNS_PER_USER_PER_MINUTE, by `author`
        self.limits = limits or SpendLimits()  # LIMIT_* and the operators' spend limits
        self.run_buffer_bytes = run_buffer_bytes  # events kept in memory per live run
        self.history_attachment_bytes = history_attachment_bytes  # earlier files per request
        self.channel_defaults = channel_defaults or ChannelDefaults()  # the service's settings a channel overrides
        self._runs: dict[str, LiveRun] = {}
        self._sessions: dict[int, LiveRun] = {}  # the latest run of each session
        self._background: list[asyncio.Task[None]] = []
        self._monotonic = monotonic
        self.recovery_lock = asyncio.Lock()  # one recovery pass at a time (start-up, takeover)

    async def open(self) -> None:
        """Start the background log flusher and the lease keeper."""
        self._background = [
            asyncio.create_task(self.buffer.run(), name="log-flusher"),
            asyncio.create_task(self._keep_leases(), name="lease-keeper"),
        ]

    async def close(self, release: bool = True) -> None:
        """Stop following runs (they stay RUNNING and resumable), flush every log row, and
        hand their leases back so the next process (or replica) resumes them at once."""
        in_flight = [live for live in self._runs.values() if live.task and not live.task.done()]
        await self._abandon(in_flight)
        for task in self._background:
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        try:
            await self.buffer.flush()
        except Exception as error:
            if not is_outage(error):
                raise
            # The rows go with this process; the runs stay RUNNING and leased, so whoever
            # resumes them asks the Bridge for every event after the last stored one.
            log.warning("stopping with %d log rows unwritten: the database is unreachable; "
                        "their runs resume from the last stored event", self.buffer.pending)
            return
        finally:
            await self.buffer.settle()  # the notices of the last flushes, for other replicas
        if release:
            await self.leases.release(live.run_id for live in in_flight)

    async def start(self, session_id: int, text: str, *, queue: bool = False,
                    user_message_id: int | None = None, max_iterations: int | None = None,
                    run_id: str | None = None, spender: Spender | None = None,
                    **fields: Any) -> RunUpdate:
        """A user message (or an edit's new user node) and the run that answers it (`run_id`:
        chosen already, `new_run_id()`; else a new one; `spender`: who its calls count against,
        when the caller knows it already, else read from the session).

        `fields` go on the new nodes: model_id, skill_folder, author, platform_message_id,
        spend_exempt; the session's model and skill where they are not given (both given: not
        read again). A start over a spend limit (SpendLimitReached), or by an `author` over
        their quota (RateLimited), is refused before anything is written.
        """
        await self._session_defaults(session_id, fields)
        previous = self._sessions.get(session_id)
        if not queue:
            await self._refuse_if_busy(session_id)
        spender = await self._within_limits(session_id, fields, spender)
        await self.quota.take(fields.get("author"))
        return await self._launch(
            session_id, RunOptions(max_iterations, after=self.done_future(previous)),
            run_id=run_id, spender=spender, text=text, user_message_id=user_message_id,
            allow_busy=queue, **fields,
        )

    async def regenerate(self, message_id: int, session_id: int | None = None,
                         **fields: Any) -> RunUpdate:
        """A new version of an assistant message, generated live."""
        message = await tree.get_message(message_id, session_id)
        await self._refuse_if_busy(message.session_id)
        spender = await self._within_limits(message.session_id, fields)
        await self.quota.take(fields.get("author"))
        return await self._launch(message.session_id, self._after_previous(message.session_id),
                                  spender=spender, regenerate_of=message_id, **fields)

    async def edit(self, message_id: int, text: str, session_id: int | None = None,
                   **fields: Any) -> RunUpdate:
        """Edit a user message into a new branch and answer it; the new branch is made in the
        transaction of the database's busy check, so a refused edit changes nothing."""
        message = await tree.get_message(message_id, session_id)
        await self._refuse_if_busy(message.session_id)
        await self._session_defaults(message.session_id, fields)  # refuse before writing
        spender = await self._within_limits(message.session_id, fields)
        await self.quota.take(fields.get("author"))
        return await self._launch(message.session_id, self._after_previous(message.session_id),
                                  spender=spender, text=text, edit_of=message.id, **fields)

    async def stop(self, run_id: str) -> RunUpdate:
        """Abort a run: queued ones never start; running ones are aborted on the Bridge."""
        live = self._runs.get(run_id)
        if live is None or live.status not in IN_FLIGHT:
            raise NotFound(f"no run {run_id} in flight here")
        if live.status == MessageStatus.QUEUED or live.task is None:
            return await self._stop_locally(live)
        try:
            await self.bridge.abort(run_id)
        except NotFound:  # the Bridge does not know it: end it here
            return await self._stop_locally(live)
        # The Bridge closed the run's question: say so now, not once its `error` event is read,
        # so a click right after Stop is told it expired instead of racing the run's end.
        await records.expire_questions(live.message_id)
        if live.expire_pauses():
            self.publish(live)
        return live.update()

    async def answer(self, clarify_id: str, answer: str, user: str | None = None,
                     pause_id: int | None = None) -> ClarifyOutcome:
        """Answer a clarify question; the first answer wins, later ones learn who answered."""
        if not answer.strip():
            raise InvalidInput("an answer cannot be empty")
        pause = await find_pause(clarify_id, pause_id)
        return await self._answered(pause.run_id,
                                    await answer_pause(self.bridge, pause, answer, user))

    async def decide(self, approval_id: str | None, decision: str, user: str, policy: Policy,
                     pause_id: int | None = None) -> ClarifyOutcome:
        """Decide on a tool approval as `user` (the asker or a chat admin; "always" an admin
        only); the first decision wins."""
        pause = await find_approval(approval_id, pause_id)
        return await self._answered(pause.run_id,
                                    await decide(self.bridge, policy, pause, decision, user))

    async def _answered(self, run_id: str, outcome: ClarifyOutcome) -> ClarifyOutcome:
        live = self._runs.get(run_id)
        if live is not None:
            live.show(outcome.pause)
            live.answered.set()  # a run continued after a restart waits for this answer
            self.publish(live)
        elif outcome.continued:  # nobody here drives it: adopt it now (if no replica does)
            from core.runtime.recovery import recover

            await recover(self)
        return outcome

    def subscribe(self, run_id: str | None = None) -> Subscription:
        """Updates of one run (None: of every run); the current view comes first."""
        subscription = self.hub.subscribe(run_id)
        for live in self._runs.values():
            if run_id is None or live.run_id == run_id:
                subscription.offer(live)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        self.hub.unsubscribe(subscription)

    def view(self, run_id: str) -> RunUpdate | None:
        """The current view of a run this process knows."""
        live = self._runs.get(run_id)
        return live.update() if live else None

    def live(self, run_id: str) -> LiveRun | None:
        return self._runs.get(run_id)

    def active(self) -> list[RunUpdate]:
        """Runs in flight here, running first, then the queue in order."""
        views = [r.update() for r in self._runs.values() if r.status in IN_FLIGHT]
        return sorted(views, key=lambda u: (u.position or 0, u.run_id))

    # -- the runner's side ------------------------------------------------------------

    def publish(self, live: LiveRun) -> None:
        """Tell subscribers the run changed, once per turn of the event loop however many
        events arrived in it (a burst of tokens costs one notification, not one each)."""
        if not live.dirty:
            live.dirty = True
            asyncio.get_running_loop().call_soon(self._announce, live)

    def _announce(self, live: LiveRun) -> None:
        live.dirty = False
        live.changed.set()
        live.changed = asyncio.Event()
        self.hub.publish(live)

    async def durably(self, operation: Callable[P, Awaitable[T]], *args: P.args,
                      **kwargs: P.kwargs) -> T:
        """A database step of a run, retried through a database outage (DatabaseUnavailable
        after `patience`); only for idempotent steps."""
        call = functools.partial(operation, *args, **kwargs)
        return await outlast(call, operation.__qualname__, self.patience)

    def let_go(self, live: LiveRun) -> None:
        """Forget a run whose state could not be written: it stays in flight in the database
        and leased to us, so `recover` (the takeover scan, or the next start) resumes it."""
        if self._runs.get(live.run_id) is live:
            del self._runs[live.run_id]
        if self._sessions.get(live.session_id) is live:
            del self._sessions[live.session_id]

    def finished(self, live: LiveRun) -> None:
        live.finished_at = self._monotonic()
        live.shown_seq = max(live.shown_seq, live.events[-1].seq if live.events else 0)
        self.buffer.forget(live.message_id)
        self.publish(live)
        self._move_up(live.session_id)

    def _move_up(self, session_id: int) -> None:
        """The runs queued behind others in a thread (a busy thread's `queue`) move up a place
        each time one of them ends: their place is the number of its runs still ahead."""
        line = sorted((r for r in self._runs.values()
                       if r.session_id == session_id and r.status in IN_FLIGHT
                       and r.finished_at is None), key=lambda r: r.message_id)
        for ahead, waiting in enumerate(line):
            if waiting.waits_for is not None and waiting.position and waiting.position != ahead:
                waiting.position = ahead or None
                self.publish(waiting)

    async def _keep_leases(self) -> None:
        """Renew our leases every third of a lease, counted from the start of the last pass:
        a pass that waited behind a busy event loop or database pool does not push the next
        one later still (a busy replica is alive and must keep its runs). Stop driving any run
        whose lease another replica took."""
        every, took = self.leases.ttl.total_seconds() / 3, 0.0
        while True:
            await asyncio.sleep(max(0.0, every - took))
            started = self._monotonic()
            try:
                await self.renew_leases()
            except Exception as error:  # keep renewing: a lost keeper would lose every run
                level = logging.WARNING if is_outage(error) else logging.ERROR
                log.log(level, "lease renewal failed (%s: %s); next try in %.1f s",
                        type(error).__name__, error, every, exc_info=level == logging.ERROR)
            took = self._monotonic() - started
            if took > every:
                log.warning("lease renewal took %.1f s, more than its period of %.1f s "
                            "(event loop or database pool busy)", took, every)

    async def renew_leases(self) -> None:
        """One renewal pass (the keeper's loop body; tests call it directly): two queries
        however many runs. A run whose lease another replica took is let go here (its task
        cancelled, the run forgotten), so that if its new owner gives it up in turn, any
        replica's takeover scan, this one's included, adopts it again: it always finishes."""
        driving = [r for r in self._runs.values() if r.task and not r.task.done()]
        if not driving:
            return
        await self.leases.renew(r.run_id for r in driving)
        taken = await self.leases.held_by_others(r.run_id for r in driving)
        lost = [r for r in driving if r.run_id in taken]
        if lost:
            log.warning("lost the lease of %d runs to another replica", len(lost))
            await self._abandon(lost)
            for live in lost:
                self.let_go(live)

    async def _abandon(self, runs: list[LiveRun]) -> None:
        for live in runs:
            if live.task is not None:
                live.task.cancel()
        await asyncio.gather(*(r.task for r in runs if r.task), return_exceptions=True)

    def prune(self) -> int:
        """Forget runs finished more than FINISHED_TTL ago; returns how many."""
        cutoff = self._monotonic() - FINISHED_TTL
        old = [r for r in self._runs.values() if r.finished_at is not None and r.finished_at < cutoff]
        for live in old:
            del self._runs[live.run_id]
            if self._sessions.get(live.session_id) is live:
                del self._sessions[live.session_id]
        return len(old)

    def adopt(self, live: LiveRun, options: RunOptions) -> None:
        """Drive a run (new, or re-attached by recovery)."""
        self._runs[live.run_id] = live
        self._sessions[live.session_id] = live
        live.waits_for = options.after
        live.task = asyncio.create_task(drive(self, live, options), name=f"run-{live.run_id}")

    # -- internals --------------------------------------------------------------------

    async def _launch(self, session_id: int, options: RunOptions, run_id: str | None = None,
                      spender: Spender | None = None, **kwargs: Any) -> RunUpdate:
        """`spender`: who its calls count against, as its start checked (not read again)."""
        run_id = run_id or new_run_id()
        status = MessageStatus.RUNNING if self._slot_free(options) else MessageStatus.QUEUED
        await self.leases.take_new(run_id)  # before the run is visible: no replica may adopt it
        try:
            turn = await records.insert_turn(session_id, run_id, status, **kwargs)
        except Exception:  # nothing was written: leave no lease behind either
            await self.leases.release([run_id])
            raise
        live = LiveRun(run_id, turn, MessageStatus(turn.assistant.status))  # QUEUED if behind
        live.spender = spender
        if turn.assistant.queued_behind:  # its place in its thread's line, until it runs
            live.position = await records.queue_position(session_id, turn.assistant.id)
        self.adopt(live, options)
        self.publish(live)
        return live.update()

    def _slot_free(self, options: RunOptions) -> bool:
        return options.after is None and self.slots.active < self.slots.cap and not self.slots.queued

    async def _session_defaults(self, session_id: int, fields: dict[str, Any]) -> None:
        """The session's model and skill where `fields` has none; both checked."""
        if "model_id" not in fields or "skill_folder" not in fields:
            session = await sessions.get_session(session_id)
            fields.setdefault("model_id", session.model_id)
            fields.setdefault("skill_folder", session.skill_folder)
        if fields["model_id"]:
            self.catalogue.model(str(fields["model_id"]))  # unknown -> NotFound, nothing written
        if fields["skill_folder"]:
            self.catalogue.skill(str(fields["skill_folder"]))

    async def _within_limits(self, session_id: int, fields: dict[str, Any],
                             spender: Spender | None = None) -> Spender:
        """SpendLimitReached when who asks (`author`; none: an operator) or where (the
        session's channel and workspace) has reached a spend limit; else who that is."""
        if spender is None:
            spender = await spender_of(session_id, fields.get("author"),
                                       bool(fields.get("spend_exempt")))
        await self.limits.check(spender)
        return spender

    async def _refuse_if_busy(self, session_id: int) -> None:
        """Busy while a run of the session is in flight here. The database decides: a run
        whose end is stored is over, though its task has not yet resumed after the commit to
        say so here (a person who saw the answer and wrote at once is not told "busy"); the
        new run still waits for that task to end (`_after_previous`). A run in flight on
        another replica is refused by the database's own check as the turn is written."""
        live = self._sessions.get(session_id)
        if live is not None and live.status in IN_FLIGHT and await records.busy_run(session_id):
            raise Busy(f"session {session_id} is still working on run {live.run_id}")

    def _after_previous(self, session_id: int) -> RunOptions:
        return RunOptions(after=self.done_future(self._sessions.get(session_id)))

    def done_future(self, previous: LiveRun | None) -> asyncio.Future[None] | None:
        """Set once the run's task ends here and so has the run it waited for (None if there
        is nothing to wait for): what a run queued behind it waits for. A queued run stopped
        before its turn leaves the next one waiting for the run still ahead."""
        if previous is None or previous.task is None:
            return None
        pending = {f for f in (previous.task, previous.waits_for) if f is not None and not f.done()}
        if not pending:
            return None
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def settled(done: asyncio.Future[Any]) -> None:
            pending.discard(done)
            if not pending and not future.done():
                future.set_result(None)
        for waited in list(pending):
            waited.add_done_callback(settled)
        return future

    async def _stop_locally(self, live: LiveRun) -> RunUpdate:
        if live.task is not None and not live.task.done():
            live.task.cancel()
            await asyncio.gather(live.task, return_exceptions=True)
        live.status = MessageStatus.STOPPED
        live.error = "Stopped."
        await records.set_status(live.message_id, MessageStatus.STOPPED, error=live.error)
        self.finished(live)
        await self.leases.release([live.run_id])
        return live.update()

    def _moved(self, run_id: str, position: int) -> None:
        """A queued run moved up. Its position is always exact when asked for; subscribers are
        woken only for the last few places or a halving (40 -> 20 -> 10 -> 5 -> 3, 2, 1): with
        hundreds queued, each finished run would otherwise re-render every waiting message."""
        live = self._runs.get(run_id)
        if live is None or live.position == position:
            return
        live.position = position
        if position <= 3 or live.announced_position is None or position <= live.announced_position // 2:
            live.announced_position = position
            self.publish(live)
