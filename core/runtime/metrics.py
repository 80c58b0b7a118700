"""Counters the runtime keeps for /metrics and the benchmarks (plain numbers, no exporter here)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RunMetrics:
    events: int = 0
    flushes: int = 0
    rows_flushed: int = 0
    flush_seconds: list[float] = field(default_factory=list)

    def event(self) -> None:
        self.events += 1

    def flushed(self, seconds: float, rows: int) -> None:
        self.flushes += 1
        self.rows_flushed += rows
        self.flush_seconds.append(seconds)
        del self.flush_seconds[:-1000]  # bounded: the recent flushes are what matter
