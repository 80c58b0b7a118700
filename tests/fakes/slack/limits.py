"""Slack's documented limits, as configuration, and what enforces them, on an injected clock
(a test moves time with `ManualClock.advance()` instead of sleeping).

The Web API's tiers are counted per method and workspace on a sliding minute (`Window`): Slack
says "rate limit windows are per minute" and welcomes bursts, so Tier 3 takes 50 calls in any
60 seconds, however they bunch, and refuses the 51st until the oldest is a minute old. A
message's edits (~1/s) and a channel's posts (1/s, short bursts) are token buckets (`Budget`):
`burst` calls back to back, refilled at `per_minute` a minute.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

Clock = Callable[[], float]


@dataclass(frozen=True)
class Budget:
    """`per_minute` calls a minute on average, at most `burst` back to back (a token bucket)."""

    per_minute: float
    burst: int


@dataclass(frozen=True)
class Window:
    """At most `calls` calls in any `seconds` (a sliding window), bunched or not."""

    calls: int
    seconds: float = 60.0


TIER_1 = Window(1)
TIER_2 = Window(20)
TIER_3 = Window(50)
TIER_4 = Window(100)
Limit = Budget | Window


def default_method_budgets() -> dict[str, Limit]:
    """Tiers from Slack's method reference (per workspace, per method). setStatus is a
    "special" tier Slack does not put a figure on: the fake holds it to Tier 3."""
    tier_2 = ("chat.startStream", "chat.stopStream")
    tier_3 = ("chat.update", "chat.delete", "reactions.add", "conversations.replies",
              "conversations.info", "assistant.threads.setStatus", "assistant.threads.setTitle",
              "agents.sessions.setStatus", "agents.sessions.rename")
    tier_4 = ("chat.postEphemeral", "chat.getPermalink", "views.open", "views.update",
              "views.push", "users.info", "files.getUploadURLExternal",
              "files.completeUploadExternal", "chat.appendStream",
              "assistant.threads.setSuggestedPrompts")
    return {**{m: TIER_2 for m in tier_2}, **{m: TIER_3 for m in tier_3},
            **{m: TIER_4 for m in tier_4}}


@dataclass(frozen=True)
class SlackLimits:
    """What the fake refuses. `None` switches a rate limit off."""

    max_text: int = 4000  # chars of `text` -> msg_too_long
    max_blocks: int = 50  # blocks in a message -> invalid_blocks
    max_view_blocks: int = 100  # blocks in a modal -> invalid_blocks
    max_section_text: int = 3000  # chars of a section's text -> invalid_blocks
    max_markdown: int = 12_000  # chars of all markdown blocks of a message -> invalid_blocks
    trigger_ttl: float = 3.0  # seconds a trigger_id can be exchanged, once
    per_message_update: Budget | None = Budget(per_minute=60, burst=1)  # chat.update 1/s
    per_channel_post: Budget | None = Budget(per_minute=60, burst=5)  # chat.postMessage
    methods: Mapping[str, Limit] = field(default_factory=default_method_budgets)

    @classmethod
    def unlimited(cls, **overrides: Any) -> SlackLimits:
        """Content limits only; no rate limits (for tests about something else)."""
        return cls(**{"per_message_update": None, "per_channel_post": None, "methods": {},
                      **overrides})


class _Bucket:
    def __init__(self, budget: Budget, now: float) -> None:
        self.budget = budget
        self.tokens = float(budget.burst)
        self.updated = now

    def wait(self, now: float) -> float:
        """Seconds until a call fits (0 when one fits now)."""
        rate = self.budget.per_minute / 60
        self.tokens = min(self.budget.burst, self.tokens + (now - self.updated) * rate)
        self.updated = now
        return 0.0 if self.tokens >= 1 - 1e-9 else (1 - self.tokens) / rate

    def take(self, now: float) -> None:
        self.tokens -= 1


class _Window:
    def __init__(self, window: Window) -> None:
        self.window = window
        self.times: deque[float] = deque()  # the calls counted in the window, oldest first

    def wait(self, now: float) -> float:
        while self.times and self.times[0] <= now - self.window.seconds:
            self.times.popleft()
        if len(self.times) < self.window.calls:
            return 0.0
        return self.times[len(self.times) - self.window.calls] + self.window.seconds - now

    def take(self, now: float) -> None:
        self.times.append(now)


class RateLimiter:
    """The method, per-channel and per-message buckets of one workspace."""

    def __init__(self, limits: SlackLimits, clock: Clock) -> None:
        self.limits = limits
        self.clock = clock
        self._buckets: dict[tuple[str, ...], _Bucket | _Window] = {}

    def admit(self, method: str, args: Mapping[str, Any]) -> int | None:
        """Count the call, or return the Retry-After seconds when it must be refused."""
        now = self.clock()
        buckets = [self._bucket(key, budget, now) for key, budget in self._keys(method, args)]
        wait = max((bucket.wait(now) for bucket in buckets), default=0.0)
        if wait > 0:
            return max(1, math.ceil(wait))
        for bucket in buckets:
            bucket.take(now)
        return None

    def _keys(
        self, method: str, args: Mapping[str, Any]
    ) -> list[tuple[tuple[str, ...], Limit]]:
        keys: list[tuple[tuple[str, ...], Limit]] = []
        if method in self.limits.methods:
            keys.append(((method,), self.limits.methods[method]))
        channel, ts = str(args.get("channel", "")), str(args.get("ts", ""))
        if method == "chat.update" and self.limits.per_message_update is not None:
            keys.append(((method, channel, ts), self.limits.per_message_update))
        if method == "chat.postMessage" and self.limits.per_channel_post is not None:
            keys.append(((method, channel), self.limits.per_channel_post))
        return keys

    def _bucket(self, key: tuple[str, ...], limit: Limit, now: float) -> _Bucket | _Window:
        if key not in self._buckets:
            self._buckets[key] = _Bucket(limit, now) if isinstance(limit, Budget) else _Window(limit)
        return self._buckets[key]


def system_clock() -> float:
    return time.monotonic()
