"""Counters the runtime keeps for /metrics and the benchmarks (plain numbers, no exporter here)."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field

from core.agent.events import Usage


@dataclass
class RunMetrics:
    events: int = 0
    flushes: int = 0
    rows_flushed: int = 0
    flush_seconds: list[float] = field(default_factory=list)
    platform_calls: Counter[tuple[str, str]] = field(default_factory=Counter)  # (platform, method)
    rate_limited: Counter[str] = field(default_factory=Counter)  # platform -> 429 answers
    bridge_reconnects: int = 0
    tokens: Counter[tuple[str, str]] = field(default_factory=Counter)  # (model, kind) -> tokens
    cost: dict[str, float] = field(default_factory=dict)  # model -> cost of its priced calls

    async def reconnect_pause(self, seconds: float) -> None:
        """The Bridge client's backoff sleep: each one is a stream being resumed."""
        self.bridge_reconnects += 1
        await asyncio.sleep(seconds)

    def platform_call(self, platform: str, method: str, rate_limited: bool = False) -> None:
        """Adapters count each call they make to their platform, and each 429 answer."""
        self.platform_calls[(platform, method)] += 1
        if rate_limited:
            self.rate_limited[platform] += 1

    def spent(self, usage: Usage) -> None:
        """A model call this process recorded: its tokens by kind, and its cost if priced."""
        model = usage.model or ""
        self.tokens[(model, "prompt")] += usage.prompt_tokens
        self.tokens[(model, "completion")] += usage.completion_tokens
        self.tokens[(model, "cached")] += usage.cached_tokens
        if usage.cost is not None:
            self.cost[model] = self.cost.get(model, 0.0) + usage.cost

    def flushed(self, seconds: float, rows: int) -> None:
        self.flushes += 1
        self.rows_flushed += rows
        self.flush_seconds.append(seconds)
        del self.flush_seconds[:-1000]  # bounded: the recent flushes are what matter
