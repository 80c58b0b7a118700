"""One run's bot message, kept in step with the run.

Coalescing: the run's updates only replace `_latest`; one loop sends an edit when the
message's budget (~1 edit/s) and the workspace's Tier-3 budget allow, rendering whatever is
newest at that moment, so a burst of events costs one edit. The finished state is always sent,
ahead of the workspace's queue of progress edits: a progress edit still waiting when the run
ends is dropped and the answer is sent as an urgent edit; one already on its way carries the
answer if it was rendered after the end.
"""

from __future__ import annotations

import asyncio

from core.conversation import bindings, views
from core.conversation.views import Versions
from core.models import Platform
from core.runtime.updates import RunUpdate

from . import refs
from .answer_view import render_answer
from .answers import show_answer
from .blocks import Payload, section
from .extras import ThreadExtras
from .live_view import render_live
from .refs import Slot
from .services import Services


class LiveMessage:
    def __init__(self, services: Services, first: RunUpdate) -> None:
        self._services = services
        self._latest = first
        self._changed = asyncio.Event()
        self._changed.set()
        self._ended = asyncio.Event()
        self._sending = False  # the pending progress edit is rendered and on its way
        self.slot: Slot | None = None
        self._versions = Versions()
        self._sent: Payload | None = None  # what the message shows now

    def offer(self, update: RunUpdate) -> None:
        self._latest = update
        self._changed.set()
        if update.finished:
            self._ended.set()

    async def run(self) -> None:
        """Post (or find) the message, edit it as the run goes, then show the answer."""
        slot = await self._find_slot(self._latest)
        if slot is None or (slot.final and self._latest.finished):
            return  # not a Slack conversation, or already shown (a re-published finished run)
        self.slot = slot = await self._posted(slot)
        self._versions = await views.versions(self._latest.message_id)  # fixed while it runs
        extras = ThreadExtras(self._services, slot)
        while True:
            await self._changed.wait()
            self._changed.clear()
            await extras.sync(self._latest)
            if self._latest.finished:
                break
            await self._progress(slot)
        await show_answer(self._services, self._latest, slot, upload=True,
                          versions=self._versions, shown=self._sent)

    async def reply(self, text: str) -> None:
        if self.slot is not None:
            slot = self.slot
            await self._services.sender.post(slot.team, slot.channel, slot.thread_ts,
                                             Payload(text, [section(text)]))

    async def _progress(self, slot: Slot) -> None:
        """One progress edit. It waits behind the workspace's other progress edits; if the run
        ends meanwhile, the wait is dropped and the answer goes ahead of them (show_answer)."""
        self._sending = False
        edit = asyncio.ensure_future(self._services.sender.edit(
            slot.team, slot.channel, slot.ts or "", self._render, progress=True))
        ended = asyncio.ensure_future(self._ended.wait())
        try:
            await asyncio.wait({edit, ended}, return_when=asyncio.FIRST_COMPLETED)
            if not edit.done() and not self._sending:
                edit.cancel()
            await asyncio.wait({edit})
        finally:
            ended.cancel()
            edit.cancel()  # only does something when this task itself is being cancelled
        if not edit.cancelled():
            edit.result()  # what the edit raised, raised here

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

    async def _posted(self, slot: Slot) -> Slot:
        if slot.ts is not None:
            return slot.moved(final=False)
        ts = await self._services.sender.post(slot.team, slot.channel, slot.thread_ts,
                                              render_live(self._latest, slot.branched))
        posted = slot.moved(ts=ts)
        await refs.save_slot(self._latest.message_id, posted)
        return posted
