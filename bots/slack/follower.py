"""Follows every run of the pool (those started here, before a restart, or through the admin
API) and gives each its LiveMessage; the subscription is latest-state-wins, so a slow Slack
never slows a run."""

from __future__ import annotations

import asyncio
import logging

from core.conversation.dedupe import Seen
from core.runtime.updates import RunUpdate, Subscription

from .live import LiveMessage
from .services import Services

log = logging.getLogger(__name__)


class RunFollower:
    def __init__(self, services: Services) -> None:
        self._services = services
        self._live: dict[str, LiveMessage] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._done = Seen()
        self._subscription: Subscription | None = None
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._subscription = self._services.pool.subscribe()
        self._task = asyncio.create_task(self._follow(self._subscription), name="slack:follow-runs")

    async def stop(self) -> None:
        if self._subscription is not None:
            self._services.pool.unsubscribe(self._subscription)
        tasks = [t for t in (self._task, *self._tasks) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def idle(self) -> None:
        """Until every live message started so far has shown its run's end."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def _follow(self, subscription: Subscription) -> None:
        while not subscription.closed:
            for update in await subscription.next():
                self._offer(update)

    def _offer(self, update: RunUpdate) -> None:
        live = self._live.get(update.run_id)
        if live is not None:
            live.offer(update)
        elif update.run_id not in self._done:
            self._begin(LiveMessage(self._services, update), update.run_id)

    def _begin(self, live: LiveMessage, run_id: str) -> None:
        self._live[run_id] = live
        guarded = self._services.background.boundary.guarded
        task = asyncio.create_task(guarded(live.run(), live.reply, f"live message of run {run_id}"),
                                   name=f"slack:live:{run_id}")
        self._tasks.add(task)
        task.add_done_callback(lambda t: self._ended(run_id, t))

    def _ended(self, run_id: str, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        self._live.pop(run_id, None)
        self._done.first(run_id)
