"""The budgets of the bot's writes, a token bucket a channel on core's RateLimiter.

Discord allows about 5 message writes (POST and PATCH) per 5 s per channel, a thread being a
channel of its own, shared by everything the bot writes there. `CHANNEL_LIMIT`, 0.8 writes/s
with a burst of 1, puts at most 4 writes in a 5-second window that opens with a write (as
Discord's do), so a little clock skew or network jitter never costs a 429: about 25 writes in
a 30 s run. Reactions, thread renames and typing are budgeted apart (`REACTION_LIMIT`,
`RENAME_LIMIT`, `TYPING_LIMIT`), so they never take a message write's token.
"""

from __future__ import annotations

from core.edge.backoff import Outages
from core.edge.ratelimit import Limit, RateLimiter

CHANNEL_LIMIT = Limit(per_second=0.8, burst=1)
# Discord's reaction route allows about 4 a second per channel; two per turn, mostly.
REACTION_LIMIT = Limit(per_second=2.0, burst=2)
RENAME_LIMIT = Limit(per_second=2 / 600, burst=2)  # two renames per ten minutes per thread
# "The bot is typing" shows for 10 s (or until it posts): a turn's first sign needs one.
TYPING_LIMIT = Limit(per_second=1 / 5, burst=1)


class ChannelBudget:
    """Tokens per channel; a 429 closes the channel for its Retry-After, an outage (5xx,
    timeout) for a pause that doubles with each failure in a row (core.edge.backoff)."""

    def __init__(self, limiter: RateLimiter, limit: Limit = CHANNEL_LIMIT,
                 route: str = "channel") -> None:
        self._limiter = limiter
        self._limit = limit
        self._route = route  # Discord budgets message writes, reactions, renames apart
        self._outages = Outages()  # its pauses run on the limiter's (injected) clock

    def key(self, channel_id: int) -> str:
        return f"discord:{self._route}:{channel_id}"

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
