"""Fixed-window rate limits keyed by bucket and major parameter, on an injected clock."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from aiohttp import web

from .clock import Clock
from .limits import Limits
from .responses import json_response

MESSAGE_WRITE = "message-write"
WEBHOOK_WRITE = "webhook-write"


@dataclass
class _Window:
    start: float
    used: int = 0


@dataclass(frozen=True)
class Verdict:
    """Whether a request may pass, with the X-RateLimit-* headers to answer with."""

    allowed: bool
    headers: dict[str, str] = field(default_factory=dict)
    retry_after: float = 0.0

    def too_many_requests(self) -> web.Response:
        """The 429 Discord sends; discord.py only retries it when a `Via` header is present."""
        body = {
            "message": "You are being rate limited.",
            "retry_after": self.retry_after,
            "global": False,
        }
        return json_response(body, status=429, headers=self.headers)


class RateLimiter:
    """Counts writes per (bucket, major) in fixed windows that start with the first write."""

    def __init__(self, limits: Limits, clock: Clock) -> None:
        self._limits = limits
        self._clock = clock
        self._windows: dict[tuple[str, str], _Window] = {}

    def _config(self, bucket: str) -> tuple[int, float]:
        if bucket == MESSAGE_WRITE:
            return self._limits.message_writes, self._limits.message_window
        return self._limits.webhook_writes, self._limits.webhook_window

    def hit(self, bucket: str, major: str) -> Verdict:
        """Count one request; refuse it when the window is used up."""
        count, per = self._config(bucket)
        now = self._clock()
        window = self._windows.get((bucket, major))
        if window is None or now >= window.start + per:
            window = self._windows[(bucket, major)] = _Window(start=now)
        reset_after = max(window.start + per - now, 0.0)
        if window.used >= count:
            retry = self._limits.retry_after
            retry = reset_after if retry is None else retry
            headers = self._headers(bucket, count, 0, reset_after)
            headers |= {"Retry-After": str(math.ceil(retry)), "X-RateLimit-Scope": "user"}
            headers["Via"] = "1.1 google"
            return Verdict(False, headers, round(retry, 3))
        window.used += 1
        if not self._limits.rate_limit_headers:
            return Verdict(True)
        return Verdict(True, self._headers(bucket, count, count - window.used, reset_after))

    @staticmethod
    def _headers(bucket: str, limit: int, remaining: int, reset_after: float) -> dict[str, str]:
        return {
            "X-RateLimit-Limit": str(limit),
            "X-RateLimit-Remaining": str(remaining),
            "X-RateLimit-Reset": f"{time.time() + reset_after:.3f}",
            # Rounded up so a client that waits it out never arrives before the window ends.
            "X-RateLimit-Reset-After": f"{math.ceil(reset_after * 1000) / 1000:.3f}",
            "X-RateLimit-Bucket": f"fake-{bucket}",
        }
