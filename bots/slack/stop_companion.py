"""A streamed turn's Stop where Slack shows none of its own: a streamed message cannot hold a
button while it streams (chat.startStream / appendStream take Markdown, task and plan
chunks; blocks only come with chat.stopStream), and Slack's native Stop exists only while the
thread's agent session is `processing` (an app declared as an agent, whose setStatus went
out). For an app Slack refuses agent sessions, a small message under the stream carries our
Stop button while the run is in flight (posted only if its budget has room now: it never
holds the turn up); it is deleted once the turn has ended, at progress priority."""

from __future__ import annotations

from .blocks import Payload, context
from .live_view import stop_control
from .refs import Slot
from .services import Services

TEXT = "Working on it… Stop it here."


class StopCompanion:
    def __init__(self, services: Services) -> None:
        self._services = services
        self._slot: Slot | None = None

    async def show(self, slot: Slot, run_id: str) -> None:
        payload = Payload(TEXT, [context(TEXT), stop_control(run_id)])
        ts = await self._services.sender.post_now(slot.team, slot.channel, slot.thread_ts, payload)
        self._slot = None if ts is None else slot.moved(ts=ts)

    @property
    def shown(self) -> bool:
        return self._slot is not None

    async def remove(self) -> None:
        slot, self._slot = self._slot, None
        if slot is not None and slot.ts is not None:
            await self._services.sender.delete(slot.team, slot.channel, slot.ts)
