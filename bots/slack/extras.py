"""The other messages a run puts in its thread: the clarify question (edited once answered)
and a divider for each compaction. Each is posted once, even across restarts (refs in the
database say what was posted)."""

from __future__ import annotations

from core import tree
from core.models import PauseStatus
from core.runtime.updates import PauseView, RunUpdate

from . import refs
from .blocks import Payload
from .clarify_view import render_clarify
from .divider_view import render_divider
from .refs import Posted, Slot
from .services import Services


class ThreadExtras:
    def __init__(self, services: Services, slot: Slot) -> None:
        self._services = services
        self._slot = slot
        self._pause_shown: tuple[int, PauseStatus] | None = None
        self._dividers: set[int] = set()

    async def sync(self, update: RunUpdate) -> None:
        for summary_id in update.summary_ids:
            if summary_id not in self._dividers:
                await self._divider(summary_id)
                self._dividers.add(summary_id)
        pause = update.pause
        if pause is not None and (pause.pause_id, pause.status) != self._pause_shown:
            await self._pause(pause)
            self._pause_shown = (pause.pause_id, pause.status)

    async def _pause(self, pause: PauseView) -> None:
        posted = await refs.pause_message(pause.pause_id)
        payload = render_clarify(pause)
        if posted is not None:
            await self._services.sender.edit(posted.team, posted.channel, posted.ts, lambda: payload)
        elif pause.status == PauseStatus.UNANSWERED:
            ts = await self._post(payload)
            await refs.save_pause_message(pause.pause_id, Posted(self._slot.team, self._slot.channel, ts))

    async def _divider(self, summary_id: int) -> None:
        if await refs.divider_of(summary_id) is not None:
            return
        await tree.get_message(summary_id)  # NotFound if it went away meanwhile
        ts = await self._post(render_divider(summary_id))
        await refs.save_divider(summary_id, Posted(self._slot.team, self._slot.channel, ts))

    async def _post(self, payload: Payload) -> str:
        slot = self._slot
        return await self._services.sender.post(slot.team, slot.channel, slot.thread_ts, payload)
