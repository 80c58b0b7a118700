"""One run's presence in its thread, kept in step with the run.

A new turn streams into one message when it can (stream.py: the workspace has the
stream methods and Tier 2 budget now). Otherwise it posts the live message (chat.postMessage,
a per-channel budget) and edits it as the run goes while the workspace has few such messages
open (budgets.OpenMessages); beyond them the message stays as posted and the thread's
loading status shows the progress. A regenerated turn, or one recovered after a restart,
edits the message it already has (a stream a restart left open is stopped first). Every turn
sets the loading status first, which Slack clears with the first reply, and holds the
thread's agent session `processing` while it runs (agent_session.py: the native Stop).

Coalescing: the run's updates only replace `_latest`; one loop sends a progress call when
the budgets allow, rendering whatever is newest at that moment, so a burst of events costs
one call. The finished state always goes out, ahead of the workspace's queue of progress: a
progress call still waiting when the run ends is dropped, and when the turn's own message
cannot take the answer at once, the answer is posted as a new message and the old one made
final right after, ahead of progress, by whichever of chat.delete and chat.update the
workspace has a call for first (it never stays "working" under the answer). Progress edits
leave the workspace the chat.update calls its turns in flight will need for their answers
(sender.Promises). A progress call already on its way when the run ends (or retried after a
429) renders the answer itself: that edit is the answer, and nothing is posted.

The module holds the whole turn: `RunFollower` gives each run its `LiveMessage`, which
shows the loading status, the thread's other messages (a clarify question, a tool approval,
compaction dividers) and, at the end, the answer (`show_answer`, `post_answer`) and its follow-ups.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from slack_sdk.errors import SlackApiError

from core.conversation import bindings, turns, views
from core.conversation.views import Versions
from core.conversation.vocabulary import (
    PauseKind,
    PauseStatus,
    PauseView,
    Platform,
    RunUpdate,
    Subscription,
)
from core.edge.dedupe import Seen

from .. import refs
from ..intake import unheard
from ..refs import Posted, Slot
from ..render.approval import render_approval
from ..render.blocks import Payload, section
from ..render.clarify import render_clarify
from ..render.turn import (
    LOADING,
    AnswerLayout,
    loading_line,
    render_answer,
    render_divider,
    render_live,
    render_placeholder,
    render_retired,
)
from ..services import SlackServices
from . import budgets
from .agent_session import AgentSession
from .sender import STATUS
from .stream import StopCompanion, StreamBroken, StreamedMessage

log = logging.getLogger(__name__)
# Seconds an answer may wait for its own message's edit budget, else it is posted: one
# interval of it, so the run's last progress edit, just sent, never sends the answer elsewhere.
ANSWER_WAIT = 1 / budgets.PER_MESSAGE_EDIT.per_second


class LiveMessage:
    def __init__(self, services: SlackServices, first: RunUpdate) -> None:
        self._services = services
        self._latest = first
        self._changed = asyncio.Event()
        self._changed.set()
        self._ended = asyncio.Event()
        self._sending = False  # the pending progress call is rendered and on its way
        self.slot: Slot | None = None
        self._versions = Versions()
        self._sent: Payload | None = None  # what the edited message shows now
        self._stream: StreamedMessage | None = None
        self._edited = False  # the turn's message is edited as the run goes
        self._counted = False  # ... and counted among the workspace's open live messages
        self._owed: list[budgets.Budget] = []  # the chat.update call promised to its answer
        self._extras: ThreadExtras | None = None
        self._ticket = services.stream_turns.ticket()  # its place among the turns begun

    def offer(self, update: RunUpdate) -> None:
        self._latest = update
        self._changed.set()
        if self._extras is not None:
            self._extras.offer(update)
        if update.finished:
            self._ended.set()

    async def run(self) -> None:
        """Open the turn's presence, follow the run, then show the answer."""
        try:
            await self._run()
        finally:
            self._services.stream_turns.done(self._ticket)  # if it never got to try

    async def _run(self) -> None:
        slot = await self._find_slot(self._latest)
        if slot is None or (slot.final == self._latest.message_id and self._latest.finished):
            return  # not a Slack conversation, or already shown (a re-published finished run)
        self._versions = await views.versions(self._latest.message_id)  # fixed while it runs
        status = LoadingStatus(self._services, slot, lambda: self._latest)
        await status.show(self._latest)
        author = await turns.author(self._latest.user_message_id)
        session = AgentSession(self._services, self._latest.session_id)
        companion = StopCompanion(self._services)
        extras: asyncio.Future[None] | None = None
        try:
            try:
                self.slot = slot = await self._opened(slot, author)
                self._extras = ThreadExtras(self._services, slot, self._latest)
                extras = asyncio.ensure_future(self._extras.follow())
                if not self._latest.finished:
                    await session.processing(slot, author)
                    if self._stream is not None and session.refused(slot.team):
                        await companion.show(slot, self._latest.run_id)  # a Stop beside the stream
                await self._follow(slot, status)
                await self._finish(slot, session)
                await extras  # the thread's other messages in their final state too
            finally:
                if extras is not None:
                    extras.cancel()  # only does something when the turn did not get this far
                if self._counted:
                    self._services.open_live.leave(slot.team)
                if companion.shown:
                    self._tidy(companion.remove)
                self._settle()
            await session.ended(slot)
        finally:
            session.release()  # its promise, whatever happened

    async def reply(self, text: str) -> None:
        if self.slot is not None:
            slot = self.slot
            await self._services.sender.post(slot.team, slot.channel, slot.thread_ts,
                                             Payload(text, [section(text)]))

    async def _follow(self, slot: Slot, status: LoadingStatus) -> None:
        while True:
            await self._changed.wait()
            self._changed.clear()
            if self._latest.finished:
                return
            await self._progress(slot, status)

    async def _opened(self, slot: Slot, recipient: str | None) -> Slot:
        """The turn's message: a stream, else a live message, edited as the run goes while
        the workspace has few of those open; beyond them it stays as posted (the loading
        status shows the progress) until the answer. A stream a restart left open is
        stopped first (recovered, the turn edits its message). A message that is not a
        stream is promised the workspace's chat.update call for its answer (sender.Promises):
        progress edits leave what the turns in flight will need at their ends."""
        if slot.ts is not None and slot.placeholder:  # the first sign, posted as it arrived
            self._owe(slot.team)
            self._edited = self._counted = self._services.open_live.enter(slot.team)
            return slot.moved(placeholder=False)  # (first_sign.py): the turn's message
        if slot.ts is not None:
            if slot.streamed:
                await StreamedMessage.close_stale(self._services, slot)
            self._owe(slot.team)
            self._counted = self._services.open_live.enter(slot.team)
            self._edited = True  # a regenerate or a recovery: its message is edited
            return slot.moved(final=None, streamed=False)
        turns = self._services.stream_turns
        await turns.turn(self._ticket)  # the turns begun before it try first
        try:
            if not self._latest.in_line:  # one stream a thread: one in line waits edited
                self._stream = await StreamedMessage.open(self._services, slot, self._latest,
                                                          recipient)
        finally:
            turns.done(self._ticket)
        if self._stream is not None:
            slot = self._stream.slot
        else:
            self._owe(slot.team)
            self._edited = self._counted = self._services.open_live.enter(slot.team)
            first = self._render() if self._edited else render_placeholder(self._latest)
            ts = await self._services.sender.post(slot.team, slot.channel, slot.thread_ts, first)
            slot = slot.moved(ts=ts)
        await refs.save_slot(self._latest.user_message_id, slot)
        return slot

    async def _progress(self, slot: Slot, status: LoadingStatus) -> None:
        if (stream := self._stream) is not None:
            try:
                await self._until_ended(lambda: stream.progress(lambda: self._latest))
            except StreamBroken as broken:
                log.warning("stream of run %s broke (%s): editing its message instead",
                            self._latest.run_id, broken)
                self._stream = None
        elif self._edited:
            await self._until_ended(lambda: self._services.sender.edit(
                slot.team, slot.channel, slot.ts or "", self._render, progress=True))
        else:  # the status is all that shows its progress: it waits for its budget
            await self._until_ended(lambda: status.show(self._latest, wait=True))

    async def _until_ended(self, send: Callable[[], Awaitable[None]]) -> None:
        """One progress call. It waits behind the workspace's other calls; if the run ends
        meanwhile, the wait is dropped (unless it is already rendered and on its way)."""
        self._sending = False
        call = asyncio.ensure_future(send())
        ended = asyncio.ensure_future(self._ended.wait())
        try:
            await asyncio.wait({call, ended}, return_when=asyncio.FIRST_COMPLETED)
            if not call.done() and not self._sending:
                call.cancel()
            await asyncio.wait({call})
        finally:
            ended.cancel()
            call.cancel()  # only does something when this task itself is being cancelled
        if not call.cancelled():
            call.result()  # what the call raised, raised here

    async def _finish(self, slot: Slot, session: AgentSession) -> None:
        """The answer, at once: in the turn's own message when that can take it now (the
        workspace's call reserved: answers ending together never queue for it), else
        posted as a new message and the old one tidied afterwards."""
        latest, versions, sender = self._latest, self._versions, self._services.sender
        usage = self._services.usage
        self._settle()  # the promised call is this one (or, posted, the old message's tidy)
        if self._stream is not None:
            await self._finish_stream(self._stream, slot.moved(streamed=False), session)
        elif self._edited and self._sent == render_answer(latest, versions, slot.branched, usage).main:
            # The last progress call was sent (or retried after a 429) once the run had
            # ended, so it rendered the answer: posting it again would show it twice.
            await show_answer(self._services, latest, slot, upload=True, versions=versions,
                              shown=self._sent)
        elif (sender.ready(budgets.message_edit(slot.team, slot.channel, slot.ts or ""),
                           within=ANSWER_WAIT)
              and await sender.reserve(budgets.updates(slot.team), urgent=True)):
            await show_answer(self._services, latest, slot, upload=True, versions=versions,
                              shown=self._sent, reserved=True)
        else:
            await post_answer(self._services, latest, slot.moved(followups=()), versions)
            self._tidy(lambda: self._retire(slot))

    async def _finish_stream(self, stream: StreamedMessage, slot: Slot,
                             session: AgentSession) -> None:
        latest, versions = self._latest, self._versions
        if not await stream.reserve_stop():
            await post_answer(self._services, latest, slot.moved(followups=()), versions)
            self._tidy(lambda: stream.tidy(latest))
            return
        try:
            await stream.finish(latest, versions, session_status=session.ends_with_stream(),
                                reserved=True)
            session.stream_ended()
        except StreamBroken as broken:
            log.warning("stream of run %s could not stop (%s): editing its message instead",
                        latest.run_id, broken)
            await show_answer(self._services, latest, slot, upload=True, versions=versions)
            return
        layout = render_answer(latest, versions, slot.branched, self._services.usage)
        await show_rest(self._services, latest, slot, layout, upload=True)

    def _owe(self, team: str) -> None:
        self._owed = budgets.updates(team)
        self._services.sender.promised.promise(self._owed, every_turn=True)

    def _settle(self) -> None:
        if self._owed:
            self._services.sender.promised.settle(self._owed)
            self._owed = []

    def _tidy(self, work: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Afterwards, on a task of its own: the old message of a turn answered in a new one."""
        self._services.background.spawn(work(), unheard, f"tidy run {self._latest.run_id}")

    async def _retire(self, slot: Slot) -> None:
        """The old live message of a turn answered in a new one: final at once, by whichever
        Tier 3 call the workspace has first (sender.retire); its follow-ups deleted."""
        sender = self._services.sender
        await sender.retire(slot.team, slot.channel, slot.ts or "", render_retired())
        for ts in slot.followups:
            await sender.delete(slot.team, slot.channel, ts)

    def _render(self) -> Payload:
        """The newest state, when the budgets let an edit through."""
        self._sending = True
        latest, branched = self._latest, self.slot.branched if self.slot else False
        if latest.finished:
            self._sent = render_answer(latest, self._versions, branched,
                                       self._services.usage).main
        else:
            self._sent = render_live(latest, branched)
        return self._sent

    async def _find_slot(self, update: RunUpdate) -> Slot | None:
        """Where the turn shows: its refs (started here or before a restart), else the
        Slack thread its session is bound to (a run started through the admin API)."""
        slot = await refs.slot_of(update.user_message_id)
        if slot is not None:
            return slot
        binding = await bindings.latest_binding(update.session_id, Platform.SLACK)
        if binding is None:
            return None
        return Slot(binding.workspace, binding.channel, binding.thread or None)


# --- the answer ---------------------------------------------------------------------------
# Show a finished turn in its slot: the answer replaces the live message (or, when that
# message cannot take it at once, comes as a new one), follow-up messages are reused in place,
# added or deleted, and a very long answer is uploaded as a file.

async def show_answer(services: SlackServices, update: RunUpdate, slot: Slot, upload: bool = False,
                      versions: Versions | None = None, shown: Payload | None = None,
                      reserved: bool = False) -> Slot:
    """Render `update` (a finished turn) into `slot`; returns and stores the slot as it is now.
    `shown` is what the message already shows: an identical edit is not sent again.
    `reserved`: the workspace's chat.update call for it was taken already."""
    assert slot.ts is not None, "the live message is posted before the answer"
    versions = versions or await views.versions(update.message_id)
    layout = render_answer(update, versions, slot.branched, services.usage)
    async with services.locks.of(slot.channel, slot.ts):
        if layout.main != shown:
            await services.sender.edit(slot.team, slot.channel, slot.ts, lambda: layout.main,
                                       reserved=reserved)
        return await show_rest(services, update, slot, layout, upload)


async def post_answer(services: SlackServices, update: RunUpdate, slot: Slot,
                      versions: Versions) -> Slot:
    """The answer as a new message in the thread, for a turn whose own message cannot take it
    at once (its budget is spent elsewhere) or that has none: an answer never waits behind
    progress. The new message becomes the turn's."""
    layout = render_answer(update, versions, slot.branched, services.usage)
    ts = await services.sender.post(slot.team, slot.channel, slot.thread_ts, layout.main)
    return await show_rest(services, update, slot.moved(ts=ts, followups=()), layout, upload=True)


async def show_rest(services: SlackServices, update: RunUpdate, slot: Slot, layout: AnswerLayout,
                    upload: bool) -> Slot:
    """The follow-ups and the attachment of an answer whose first message is shown."""
    followups = await _followups(services, slot, layout.followups)
    if upload and layout.attachment:
        await services.sender.upload(slot.team, slot.channel, slot.thread_ts, "answer.md",
                                     layout.attachment.encode(), "📎 The full answer")
    shown = slot.moved(followups=followups, final=update.message_id)
    await refs.save_slot(update.user_message_id, shown)
    return shown


async def _followups(services: SlackServices, slot: Slot, parts: list[Payload]) -> tuple[str, ...]:
    sender, used = services.sender, []
    for index, part in enumerate(parts):
        if index < len(slot.followups):
            await sender.edit(slot.team, slot.channel, slot.followups[index], _always(part))
            used.append(slot.followups[index])
        else:
            used.append(await sender.post(slot.team, slot.channel, slot.thread_ts, part))
    surplus = slot.followups[len(parts):]
    await asyncio.gather(*(sender.delete(slot.team, slot.channel, ts) for ts in surplus))
    return tuple(used)


# --- the thread's other messages ----------------------------------------------------------
# The other messages a run puts in its thread: the clarify question and the tool approval
# (each edited once answered) and a divider for each compaction. Each is posted once, even across restarts (refs in the
# database say what was posted).

class ThreadExtras:
    """Follows the run beside its live message (`follow`, latest state wins), so that the
    answer never waits for a question's edit, nor a question for a progress call."""

    def __init__(self, services: SlackServices, slot: Slot, first: RunUpdate) -> None:
        self._services = services
        self._slot = slot
        self._latest = first
        self._changed = asyncio.Event()
        self._changed.set()
        self._pauses_shown: dict[int, PauseStatus] = {}  # pause id: the status shown
        self._dividers: set[int] = set()

    def offer(self, update: RunUpdate) -> None:
        self._latest = update
        self._changed.set()

    async def follow(self) -> None:
        """Until the run's end is shown in the thread's other messages."""
        while True:
            await self._changed.wait()
            self._changed.clear()
            update = self._latest
            await self.sync(update)
            if update.finished:
                return

    async def sync(self, update: RunUpdate) -> None:
        for summary_id in update.summary_ids:
            if summary_id not in self._dividers:
                await self._divider(summary_id)
                self._dividers.add(summary_id)
        for pause in (update.pause, update.approval):
            if pause is not None and self._pauses_shown.get(pause.pause_id) != pause.status:
                await self._pause(pause)
                self._pauses_shown[pause.pause_id] = pause.status

    async def _pause(self, pause: PauseView) -> None:
        """Post the question once, even when a replica died between its post and storing its
        ts (Slack has no create-once key): a post is marked begun first, and a begun one is
        looked for in the thread, by the metadata it was posted with, before posting again."""
        posted, begun = await refs.pause_post(pause.pause_id)
        if posted is None and begun:
            posted = await self._posted_before(pause.pause_id)
            if posted is not None:
                await refs.save_pause_message(pause.pause_id, posted)
        payload = render_approval(pause) if pause.kind == PauseKind.APPROVAL else render_clarify(pause)
        if posted is not None:
            await self._services.sender.edit(posted.team, posted.channel, posted.ts, lambda: payload)
        elif pause.status == PauseStatus.UNANSWERED:
            await refs.save_pause_posting(pause.pause_id)
            ts = await self._post(payload, _pause_metadata(pause.pause_id))
            await refs.save_pause_message(pause.pause_id, Posted(self._slot.team, self._slot.channel, ts))

    async def _posted_before(self, pause_id: int) -> Posted | None:
        """The thread's message a begun post of this question left (found by its metadata), or
        None: not there (the post never reached Slack) or the thread not readable now."""
        slot = self._slot
        if slot.thread_ts is None:
            return None
        try:
            posted = await self._services.sender.posted_with(slot.team, slot.channel,
                                                             slot.thread_ts, QUESTION)
        except Exception as error:  # post it again, as before
            log.warning("could not look for question %s in its thread: %s", pause_id, error)
            return None
        return next((Posted(slot.team, slot.channel, ts) for ts, payload in posted
                     if payload.get("pause_id") == pause_id), None)

    async def _divider(self, summary_id: int) -> None:
        if await refs.divider_of(summary_id) is not None:
            return
        await views.stored_message(summary_id)  # NotFound if it went away meanwhile
        ts = await self._post(render_divider(summary_id))
        await refs.save_divider(summary_id, Posted(self._slot.team, self._slot.channel, ts))

    async def _post(self, payload: Payload, metadata: dict[str, Any] | None = None) -> str:
        slot = self._slot
        return await self._services.sender.post(slot.team, slot.channel, slot.thread_ts, payload,
                                                metadata)


QUESTION = "hermes_question"


def _pause_metadata(pause_id: int) -> dict[str, Any]:
    """The metadata a question (or tool approval) is posted with: how it is found again."""
    return {"event_type": QUESTION, "event_payload": {"pause_id": pause_id}}


# --- the loading status -------------------------------------------------------------------
# The thread's loading status (assistant.threads.setStatus with `loading_messages`): what
# the agent does, shown where no live message shows it. The least valuable call a turn makes:
# sent only when its budget has room now (where nothing else shows the progress, once it has,
# behind everything urgent), skipped silently where the workspace refuses it (logged once),
# and cleared by Slack when the bot replies in the thread.

WORKING = LOADING


class LoadingStatus:
    def __init__(self, services: SlackServices, slot: Slot,
                 newest: Callable[[], RunUpdate] | None = None) -> None:
        self._services = services
        self._slot = slot
        self._newest = newest  # the run as it is now
        self._shown = services.statuses.take((slot.team, slot.channel, slot.thread_ts or ""))

    async def show(self, update: RunUpdate, wait: bool = False) -> None:
        """`update`'s line, if its budget has room now; with `wait`, once it has (the line of
        the run as it is then)."""
        slot, features = self._slot, self._services.features
        line = loading_line(update)
        if slot.thread_ts is None or line == self._shown or not features.has(slot.team, STATUS):
            return
        try:
            if wait:
                line, sent = await self._when_allowed(slot.thread_ts, update), True
            else:
                sent = await self._services.sender.set_status(
                    slot.team, slot.channel, slot.thread_ts, WORKING, [line])
        except SlackApiError as error:
            if not features.refused(slot.team, STATUS, error):
                log.info("loading status not set: %s", error.response.get("error"))
            return
        if sent:
            self._shown = line

    async def _when_allowed(self, thread_ts: str, update: RunUpdate) -> str:
        """Set once the budget allows, with the line of the run as it is then; the line sent."""
        sent: list[str] = []

        def lines() -> list[str]:
            sent[:] = [loading_line(self._newest() if self._newest else update)]
            return sent

        slot = self._slot
        await self._services.sender.set_status_when_allowed(slot.team, slot.channel, thread_ts,
                                                           WORKING, lines)
        return sent[0]

    def replied(self) -> None:
        """The bot replied in the thread, which clears the status."""
        self._shown = None


# --- following every run ------------------------------------------------------------------
# Follows every run of the pool (those started here, before a restart, or through the admin
# API) and gives each its LiveMessage; the subscription is latest-state-wins, so a slow Slack
# never slows a run.


class RunFollower:
    def __init__(self, services: SlackServices) -> None:
        self._services = services
        self._live: dict[str, LiveMessage] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._done = Seen()
        self._subscription: Subscription | None = None
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._subscription = self._services.pool.subscribe()
        self._task = asyncio.create_task(self._follow(self._subscription), name="slack:follow-runs")

    async def stop(self) -> None:
        if self._subscription is not None:
            self._services.pool.unsubscribe(self._subscription)
        tasks = [t for t in (self._task, *self._tasks) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def idle(self) -> None:
        """Until every live message started so far has shown its run's end."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def _follow(self, subscription: Subscription) -> None:
        while not subscription.closed:
            for update in await subscription.next():
                self._offer(update)

    def _offer(self, update: RunUpdate) -> None:
        live = self._live.get(update.run_id)
        if live is not None:
            live.offer(update)
        elif update.run_id not in self._done:
            self._begin(LiveMessage(self._services, update), update.run_id)

    def _begin(self, live: LiveMessage, run_id: str) -> None:
        self._live[run_id] = live
        guarded = self._services.background.boundary.guarded
        task = asyncio.create_task(guarded(live.run(), live.reply, f"live message of run {run_id}"),
                                   name=f"slack:live:{run_id}")
        self._tasks.add(task)
        task.add_done_callback(lambda t: self._ended(run_id, t))

    def _ended(self, run_id: str, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        self._live.pop(run_id, None)
        self._done.first(run_id)


def _always(part: Payload) -> Callable[[], Payload]:
    """What an edit that does not depend on the message's state shows."""
    return lambda: part
