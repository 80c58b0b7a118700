"""The outbox: pending writes per channel, one worker per busy channel, the latest job per key.

A job is offered under a key (a turn, a question, a one-off post). Offering again under a
pending key replaces the job in its place, so a run that changes ten times while its channel
waits for budget costs one write, showing the newest state: coalesced, and the final state is
always sent because nothing removes a job but running it. The worker takes a token of the
channel's budget *before* it picks the job, so the job it picks is the freshest. A job the
writer could not do now raises `RetryLater`: a rate-limited job is tried MAX_ATTEMPTS times;
one that met Discord down is tried until the budget's outage patience is spent.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass

import discord

from bots.discord.delivery.budgets import (
    RENAME_LIMIT,
    REACTION_LIMIT,
    TYPING_LIMIT,
    ChannelBudget,
    Permit,
)
from core.edge.ratelimit import RateLimiter

log = logging.getLogger(__name__)


class RetryLater(Exception):
    """A write was rate limited, or met Discord down (`outage`): run the job again later."""

    def __init__(self, outage: bool = False) -> None:
        super().__init__("Discord was down" if outage else "rate limited")
        self.outage = outage


Job = Callable[[Permit], Awaitable[None]]
MAX_ATTEMPTS = 5


@dataclass(slots=True)
class _Entry:
    job: Job
    attempts: int = 0


class Outbox:
    def __init__(self, budget: ChannelBudget) -> None:
        self._budget = budget
        self._queues: dict[int, OrderedDict[Hashable, _Entry]] = {}
        self._workers: dict[int, asyncio.Task[None]] = {}

    def offer(self, channel_id: int, key: Hashable, job: Job) -> None:
        """Queue `job` for the channel, replacing a pending job of the same key in its place."""
        queue = self._queues.setdefault(channel_id, OrderedDict())
        pending = queue.get(key)
        queue[key] = _Entry(job, pending.attempts if pending else 0)
        if channel_id not in self._workers:
            self._workers[channel_id] = asyncio.create_task(
                self._drain(channel_id, queue), name=f"discord-outbox-{channel_id}")

    def busy(self) -> int:
        """How many channels have writes waiting or going out."""
        return len(self._workers)

    async def close(self, timeout: float) -> None:
        """Let pending writes finish for up to `timeout` seconds, then cancel the rest."""
        workers = list(self._workers.values())
        if workers:
            await asyncio.wait(workers, timeout=timeout)
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)

    async def _drain(self, channel_id: int, queue: OrderedDict[Hashable, _Entry]) -> None:
        try:
            while queue:
                await self._budget.acquire(channel_id)
                key, entry = queue.popitem(last=False)
                await self._run(channel_id, key, entry)
        finally:
            del self._workers[channel_id]
            if not queue:
                self._queues.pop(channel_id, None)

    async def _run(self, channel_id: int, key: Hashable, entry: _Entry) -> None:
        try:
            await entry.job(Permit(self._budget, channel_id))
        except RetryLater as retry:
            self._again(channel_id, key, entry, counted=not retry.outage)
        except discord.HTTPException as error:  # a bad request is never repeated
            log.warning("discord write dropped (%s %s): %s", error.status, error.code, error.text,
                        extra={"channel_id": channel_id, "job": repr(key)})
        except Exception:
            log.exception("discord write failed", extra={"channel_id": channel_id, "job": repr(key)})

    def _again(self, channel_id: int, key: Hashable, entry: _Entry, counted: bool) -> None:
        if counted:
            entry.attempts += 1
        if entry.attempts >= MAX_ATTEMPTS:
            log.warning("discord write given up after %d attempts", entry.attempts,
                        extra={"channel_id": channel_id, "job": repr(key)})
            return
        queue = self._queues[channel_id]  # its worker is the caller, still draining it
        queue.setdefault(key, entry)  # a newer job for the key wins over the retry
        queue.move_to_end(key, last=False)


@dataclass(frozen=True, slots=True)
class Outboxes:
    """The message writes, and the cosmetic writes on Discord's budgets of their own."""

    messages: Outbox
    reactions: Outbox
    renames: Outbox
    typing: Outbox

    @classmethod
    def on(cls, limiter: RateLimiter) -> Outboxes:
        return cls(Outbox(ChannelBudget(limiter)),
                   Outbox(ChannelBudget(limiter, REACTION_LIMIT, "reactions")),
                   Outbox(ChannelBudget(limiter, RENAME_LIMIT, "renames")),
                   Outbox(ChannelBudget(limiter, TYPING_LIMIT, "typing")))

    async def close(self, timeout: float) -> None:
        await asyncio.gather(*(o.close(timeout) for o in (self.messages, self.reactions,
                                                          self.renames, self.typing)))
