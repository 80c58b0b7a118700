"""One run's presence in its thread, kept in step with the run.

A new turn streams into one message when it can (live_stream.py: the workspace has the
stream methods and Tier 2 budget now). Otherwise it posts the live message (chat.postMessage,
a per-channel budget) and edits it as the run goes while the workspace has few such messages
open (budgets.OpenMessages); beyond them the message stays as posted and the thread's
loading status shows the progress. A regenerated turn, or one recovered after a restart,
edits the message it already has (a stream a restart left open is stopped first). Every turn
sets the loading status first, which Slack clears with the first reply, and holds the
thread's agent session `processing` while it runs (agent_sessions.py: the native Stop).

Coalescing: the run's updates only replace `_latest`; one loop sends a progress call when
the budgets allow, rendering whatever is newest at that moment, so a burst of events costs
one call. The finished state always goes out, ahead of the workspace's queue of progress: a
progress call still waiting when the run ends is dropped, and when the turn's own message
cannot take the answer at once, the answer is posted as a new message and the old one tidied
afterwards, at progress priority (it never stays "thinking…").
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from core.conversation import bindings, turns, views
from core.conversation.views import Versions
from core.models import Platform
from core.runtime.updates import RunUpdate

from . import budgets, refs
from .agent_sessions import AgentSession
from .answer_view import render_answer
from .answers import post_answer, show_answer, show_rest
from .blocks import Payload, section
from .extras import ThreadExtras
from .live_status import LoadingStatus
from .live_stream import StreamBroken, StreamedMessage
from .live_view import render_live, render_placeholder
from .refs import Slot
from .replies import unheard
from .services import Services
from .stop_companion import StopCompanion

log = logging.getLogger(__name__)
ANSWER_WAIT = 1.0  # seconds an answer may wait for its message's budget, else it is posted


class LiveMessage:
    def __init__(self, services: Services, first: RunUpdate) -> None:
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

    def offer(self, update: RunUpdate) -> None:
        self._latest = update
        self._changed.set()
        if update.finished:
            self._ended.set()

    async def run(self) -> None:
        """Open the turn's presence, follow the run, then show the answer."""
        slot = await self._find_slot(self._latest)
        if slot is None or (slot.final and self._latest.finished):
            return  # not a Slack conversation, or already shown (a re-published finished run)
        self._versions = await views.versions(self._latest.message_id)  # fixed while it runs
        status = LoadingStatus(self._services, slot)
        await status.show(self._latest)
        author = await turns.author(self._latest.user_message_id)
        session = AgentSession(self._services, self._latest.session_id)
        companion = StopCompanion(self._services)
        try:
            self.slot = slot = await self._opened(slot, author)
            if not self._latest.finished:
                await session.processing(slot, author)
                if self._stream is not None and session.refused(slot.team):
                    await companion.show(slot, self._latest.run_id)  # a Stop beside the stream
            await self._follow(slot, status)
            await self._finish(slot, session)
        finally:
            if self._counted:
                self._services.open_live.leave(slot.team)
            if companion.shown:
                self._tidy(companion.remove)
        await session.ended(slot)

    async def reply(self, text: str) -> None:
        if self.slot is not None:
            slot = self.slot
            await self._services.sender.post(slot.team, slot.channel, slot.thread_ts,
                                             Payload(text, [section(text)]))

    async def _follow(self, slot: Slot, status: LoadingStatus) -> None:
        extras = ThreadExtras(self._services, slot)
        while True:
            await self._changed.wait()
            self._changed.clear()
            await extras.sync(self._latest)
            if self._latest.finished:
                return
            await self._progress(slot, status)

    async def _opened(self, slot: Slot, recipient: str | None) -> Slot:
        """The turn's message: a stream, else a live message, edited as the run goes while
        the workspace has few of those open; beyond them it stays as posted (the loading
        status shows the progress) until the answer. A stream a restart left open is
        stopped first (recovered, the turn edits its message)."""
        if slot.ts is not None:
            if slot.streamed:
                await StreamedMessage.close_stale(self._services, slot)
            self._counted = self._services.open_live.enter(slot.team)
            self._edited = True  # a regenerate or a recovery: its message is edited
            return slot.moved(final=False, streamed=False)
        self._stream = await StreamedMessage.open(self._services, slot, self._latest, recipient)
        if self._stream is not None:
            slot = self._stream.slot
        else:
            self._edited = self._counted = self._services.open_live.enter(slot.team)
            first = self._render() if self._edited else render_placeholder(self._latest)
            ts = await self._services.sender.post(slot.team, slot.channel, slot.thread_ts, first)
            slot = slot.moved(ts=ts)
        await refs.save_slot(self._latest.message_id, slot)
        return slot

    async def _progress(self, slot: Slot, status: LoadingStatus) -> None:
        if (stream := self._stream) is not None:
            try:
                await self._until_ended(lambda: stream.progress(self._latest))
            except StreamBroken as broken:
                log.warning("stream of run %s broke (%s): editing its message instead",
                            self._latest.run_id, broken)
                self._stream = None
        elif self._edited:
            await self._until_ended(lambda: self._services.sender.edit(
                slot.team, slot.channel, slot.ts or "", self._render, progress=True))
        else:
            await status.show(self._latest)

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
        latest, versions = self._latest, self._versions
        if self._stream is not None:
            await self._finish_stream(self._stream, slot.moved(streamed=False), session)
        elif self._services.sender.ready(budgets.updates(slot.team), within=ANSWER_WAIT):
            await show_answer(self._services, latest, slot, upload=True, versions=versions,
                              shown=self._sent)
        else:
            await post_answer(self._services, latest, slot.moved(followups=()), versions)
            self._tidy(lambda: self._delete_stale(slot))

    async def _finish_stream(self, stream: StreamedMessage, slot: Slot,
                             session: AgentSession) -> None:
        latest, versions = self._latest, self._versions
        if not stream.can_stop_now():
            await post_answer(self._services, latest, slot.moved(followups=()), versions)
            self._tidy(lambda: stream.tidy(latest))
            return
        try:
            await stream.finish(latest, versions, session_status=session.ends_with_stream())
            session.stream_ended()
        except StreamBroken as broken:
            log.warning("stream of run %s could not stop (%s): editing its message instead",
                        latest.run_id, broken)
            await show_answer(self._services, latest, slot, upload=True, versions=versions)
            return
        layout = render_answer(latest, versions, slot.branched)
        await show_rest(self._services, latest, slot, layout, upload=True)

    def _tidy(self, work: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Later, at progress priority: the old message of a turn answered in a new one."""
        self._services.background.spawn(work(), unheard, f"tidy run {self._latest.run_id}")

    async def _delete_stale(self, slot: Slot) -> None:
        for ts in (slot.ts, *slot.followups):
            await self._services.sender.delete(slot.team, slot.channel, ts or "")

    def _render(self) -> Payload:
        """The newest state, when the budgets let an edit through."""
        self._sending = True
        latest, branched = self._latest, self.slot.branched if self.slot else False
        if latest.finished:
            self._sent = render_answer(latest, self._versions, branched).main
        else:
            self._sent = render_live(latest, branched)
        return self._sent

    async def _find_slot(self, update: RunUpdate) -> Slot | None:
        """Where the turn shows: its refs (started here or before a restart), else the
        Slack thread its session is bound to (a run started through the admin API)."""
        slot = await refs.slot_of(update.message_id)
        if slot is not None:
            return slot
        binding = await bindings.latest_binding(update.session_id, Platform.SLACK)
        if binding is None:
            return None
        return Slot(binding.workspace, binding.channel, binding.thread or None)
