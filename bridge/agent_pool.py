"""One AIAgent per chat session, at most `size` kept (least recently used goes first).

Turns of one session are serialised by a per-session lock; different sessions run in
parallel. An agent in use is never evicted; a dropped agent in use is closed when its turn
ends.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from bridge.agent_factory import ModelChoice


@dataclass
class _Slot:
    agent: Any
    model: ModelChoice
    busy: bool = False


@dataclass
class AgentPool:
    """LRU of agents keyed by session id."""

    size: int
    build: Callable[[str, ModelChoice], Any]  # blocking; run on a worker thread
    _slots: OrderedDict[str, _Slot] = field(default_factory=OrderedDict)
    _locks: dict[str, asyncio.Lock] = field(default_factory=dict)
    _waiting: dict[str, int] = field(default_factory=dict)  # leases held or awaited

    def __len__(self) -> int:
        return len(self._slots)

    def __contains__(self, session_id: str) -> bool:
        return session_id in self._slots

    @asynccontextmanager
    async def lease(self, session_id: str, model: ModelChoice) -> AsyncIterator[Any]:
        """The session's agent, exclusively, for one turn (waits for the previous turn)."""
        lock = self._locks.setdefault(session_id, asyncio.Lock())
        self._waiting[session_id] = self._waiting.get(session_id, 0) + 1
        try:
            async with lock:
                slot = await self._slot_for(session_id, model)
                slot.busy = True
                self._evict()
                try:
                    yield slot.agent
                finally:
                    slot.busy = False
                    if self._slots.get(session_id) is not slot:
                        _close(slot.agent)  # reset or replaced while the turn ran
                    self._evict()
        finally:
            self._release_lock(session_id)

    def _release_lock(self, session_id: str) -> None:
        self._waiting[session_id] -= 1
        if not self._waiting[session_id]:
            del self._waiting[session_id], self._locks[session_id]

    def holds(self, session_id: str, agent: Any) -> bool:
        """Whether `agent` is still the session's (not reset or replaced meanwhile)."""
        slot = self._slots.get(session_id)
        return slot is not None and slot.agent is agent

    def drop(self, session_id: str) -> bool:
        """Forget the session's agent (closed now, or after its running turn)."""
        slot = self._slots.pop(session_id, None)
        if slot is not None and not slot.busy:
            _close(slot.agent)
        return slot is not None

    def close_all(self) -> None:
        for session_id in list(self._slots):
            self.drop(session_id)

    async def _slot_for(self, session_id: str, model: ModelChoice) -> _Slot:
        slot = self._slots.get(session_id)
        if slot is None or slot.model != model:
            agent = await asyncio.to_thread(self.build, session_id, model)
            if slot is not None:
                _close(slot.agent)
            slot = _Slot(agent, model)
            self._slots[session_id] = slot
        self._slots.move_to_end(session_id)
        return slot

    def _evict(self) -> None:
        idle = [sid for sid, slot in self._slots.items() if not slot.busy]
        while len(self._slots) > self.size and idle:
            session_id = idle.pop(0)
            _close(self._slots.pop(session_id).agent)


def _close(agent: Any) -> None:
    agent.close()
