"""The write budget of each Discord channel, on core's RateLimiter (one token bucket a channel).

Discord allows about 5 message writes (POST and PATCH) per 5 s per channel, a thread being a
channel of its own, shared by everything the bot writes there. 0.8 writes/s with a burst of 1
puts at most 4 writes in a 5-second window that opens with a write (as Discord's do), so a
little clock skew or network jitter never costs a 429: about 25 writes in a 30 s run.
"""

from __future__ import annotations

import discord

from core.backoff import Outages
from core.ratelimit import Limit, RateLimiter

CHANNEL_LIMIT = Limit(per_second=0.8, burst=1)
DEFAULT_RETRY_AFTER = 5.0  # a whole window, when a 429 does not say how long
FORBIDDEN_PAUSE = 60.0  # a channel that refused us: do not ask again at once


class RetryLater(Exception):
    """A write was rate limited, or met Discord down (`outage`): run the job again later."""

    def __init__(self, outage: bool = False) -> None:
        super().__init__("Discord was down" if outage else "rate limited")
        self.outage = outage


class ChannelBudget:
    """Tokens per channel; a 429 closes the channel for its Retry-After, an outage (5xx,
    timeout) for a pause that doubles with each failure in a row (core.backoff)."""

    def __init__(self, limiter: RateLimiter, limit: Limit = CHANNEL_LIMIT) -> None:
        self._limiter = limiter
        self._limit = limit
        self._outages = Outages()  # its pauses run on the limiter's (injected) clock

    @staticmethod
    def key(channel_id: int) -> str:
        return f"discord:channel:{channel_id}"

    async def acquire(self, channel_id: int) -> None:
        await self._limiter.acquire(self.key(channel_id), self._limit)

    def penalise(self, channel_id: int, seconds: float) -> None:
        self._limiter.penalise(self.key(channel_id), seconds)

    def outage(self, channel_id: int) -> float | None:
        """A write met Discord down: close the channel for the next pause of its streak and
        return it; None once the streak's patience is spent (give the write up)."""
        pause = self._outages.failed(channel_id)
        if pause is not None:
            self.penalise(channel_id, pause)
        return pause

    def recovered(self, channel_id: int) -> None:
        """A write went through: the channel's next outage starts with a short pause."""
        self._outages.recovered(channel_id)


class Permit:
    """The writes of one outbox job: the outbox paid for the first before the job started."""

    def __init__(self, budget: ChannelBudget, channel_id: int, prepaid: bool = True) -> None:
        self.budget = budget
        self.channel_id = channel_id
        self._prepaid = prepaid

    async def take(self) -> None:
        """Before each write: the first is paid for, the next ones wait for a token."""
        if not self._prepaid:
            await self.budget.acquire(self.channel_id)
        self._prepaid = False


def retry_after(error: Exception) -> float:
    """Seconds a 429 asks us to wait: discord.py's RateLimited, the Retry-After header, or a window."""
    if isinstance(error, discord.RateLimited):
        return error.retry_after
    response = getattr(error, "response", None)
    header = response.headers.get("Retry-After") if response is not None else None
    try:
        return float(header) if header else DEFAULT_RETRY_AFTER
    except ValueError:
        return DEFAULT_RETRY_AFTER
