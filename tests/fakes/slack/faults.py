"""Faults a test injects for the next N calls of a method: 5xx, hang, ratelimited."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Literal

FaultKind = Literal["status", "hang", "ratelimited"]


@dataclass
class Fault:
    kind: FaultKind
    status: int = 500
    retry_after: int = 1
    released: asyncio.Event = field(default_factory=asyncio.Event)


class FaultBox:
    """Per-method queues of one-shot faults; `"*"` matches any method."""

    def __init__(self) -> None:
        self._queues: dict[str, list[Fault]] = {}
        self._hanging: list[tuple[str, Fault]] = []

    def add(self, method: str, fault: Fault, times: int) -> None:
        for _ in range(times):
            self._queues.setdefault(method, []).append(
                Fault(fault.kind, fault.status, fault.retry_after)
            )

    def take(self, method: str) -> Fault | None:
        for key in (method, "*"):
            queue = self._queues.get(key)
            if queue:
                fault = queue.pop(0)
                if fault.kind == "hang":
                    self._hanging.append((method, fault))
                return fault
        return None

    def hanging(self, method: str | None = None) -> int:
        """How many calls are held right now."""
        return sum(1 for m, f in self._hanging if method in (None, m) and not f.released.is_set())

    def release(self, method: str | None = None) -> None:
        """Let held calls (of `method`, or all) go on to be answered normally."""
        for held, fault in self._hanging:
            if method in (None, held):
                fault.released.set()
        self._hanging = [(m, f) for m, f in self._hanging if not f.released.is_set()]
