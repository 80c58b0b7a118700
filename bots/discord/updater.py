"""Follow every run of the pool and keep its Discord messages in step (DESIGN §6).

One subscription to the whole pool (latest state wins), so runs this process did not start
(recovered after a restart, started from the admin API) show too: where to show them is read
from the database. Runs of sessions not on Discord are skipped.
"""

from __future__ import annotations

import logging

from bots.discord.dividers import DividerPresenter
from bots.discord.pauses import PausePresenter
from bots.discord.targets import Targets
from bots.discord.turns import TurnPresenter
from core.runtime.pool import RunPool
from core.runtime.updates import RunUpdate

log = logging.getLogger(__name__)


class LiveUpdater:
    def __init__(self, pool: RunPool, targets: Targets, turns: TurnPresenter,
                 pauses: PausePresenter, dividers: DividerPresenter) -> None:
        self._pool = pool
        self._targets = targets
        self._turns = turns
        self._pauses = pauses
        self._dividers = dividers

    async def run(self) -> None:
        """Route updates until cancelled."""
        subscription = self._pool.subscribe()
        try:
            while not subscription.closed:
                for update in await subscription.next():
                    await self._route_safely(update)
        finally:
            self._pool.unsubscribe(subscription)

    async def _route_safely(self, update: RunUpdate) -> None:
        try:
            await self.route(update)
        except Exception:  # one bad update must not stop the others from showing
            log.exception("could not show a run update", extra={"run_id": update.run_id})

    async def route(self, update: RunUpdate) -> None:
        """Queue what `update` changes: the turn's messages, its question, its dividers."""
        target = await self._targets.turn(update.session_id, update.user_message_id)
        if target is None:
            return
        self._turns.show(update, target)
        if update.pause is not None:
            self._pauses.show(update.pause, update.finished, target.channel_id)
        for summary_id in update.summary_ids:
            self._dividers.show(summary_id, target.channel_id)
