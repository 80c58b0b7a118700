"""Faults a test injects for the next N calls of a method (5xx, hang, ratelimited), or for a
window of the fake's clock (an outage: 5xx, or no answer until it ends)."""

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


@dataclass
class Outage:
    """Calls of `method` ("*" = any) before `until` (the fake's clock) are not applied: they
    answer `status` at once, or with `hang` only when the outage ends (a client's timeout
    fires first). `met` counts the calls that met it."""

    method: str
    until: float
    status: int = 503
    hang: bool = False
    met: int = 0  # `end()` ends it now

    def end(self) -> None:
        self.until = float("-inf")

    def covers(self, method: str, now: float) -> bool:
        return self.method in ("*", method) and now < self.until


class FaultBox:
    """Per-method queues of one-shot faults; `"*"` matches any method."""

    def __init__(self) -> None:
        self._queues: dict[str, list[Fault]] = {}
        self._hanging: list[tuple[str, Fault]] = []
        self.outages: list[Outage] = []

    def outage_for(self, method: str, now: float) -> Outage | None:
        """The outage a call of `method` meets now, counted as met."""
        outage = next((o for o in self.outages if o.covers(method, now)), None)
        if outage is not None:
            outage.met += 1
        return outage

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
