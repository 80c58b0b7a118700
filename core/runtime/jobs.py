"""Periodic upkeep with apscheduler (in-memory job store, jobs added at each start)."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import TYPE_CHECKING

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from core.edge import shared_budgets
from core.edge.event_ledger import EventLedger
from core.errors import HermesChatError
from core.store.models import ClarifyPause, PauseStatus, utc_now

if TYPE_CHECKING:
    from core.runtime.pool import RunPool

log = logging.getLogger(__name__)
PAUSE_RETENTION = timedelta(days=30)


async def expire_old_pauses(retention: timedelta = PAUSE_RETENTION) -> int:
    """Unanswered questions older than the retention expire (their buttons explain why)."""
    return await ClarifyPause.filter(
        status=PauseStatus.UNANSWERED, created_at__lt=utc_now() - retention
    ).update(status=PauseStatus.EXPIRED)


async def enforce_clarify_fallback(pool: RunPool, fallback: timedelta) -> int:
    """Runs waiting on a question longer than the fallback are aborted and the pause expires."""
    stale = await ClarifyPause.filter(
        status=PauseStatus.UNANSWERED, created_at__lt=utc_now() - fallback
    )
    for pause in stale:
        await ClarifyPause.filter(id=pause.id).update(status=PauseStatus.EXPIRED)
        try:
            await pool.stop(pause.run_id)
        except HermesChatError as error:
            log.info("fallback: run %s already gone (%s)", pause.run_id, error.message)
    return len(stale)


def start_jobs(pool: RunPool, clarify_fallback: timedelta = timedelta(hours=24)) -> AsyncIOScheduler:
    """Schedule the upkeep jobs on the running loop; the caller shuts the scheduler down.

    Each job runs once at the start, then at its interval: a replica that takes the jobs over
    from a dead leader runs them at once, so leaders that change more often than an interval
    do not starve a job."""
    scheduler = AsyncIOScheduler(timezone="UTC")
    now = utc_now()
    scheduler.add_job(expire_old_pauses, "interval", hours=1, id="expire-pauses",
                      next_run_time=now)
    scheduler.add_job(enforce_clarify_fallback, "interval", minutes=5, args=[pool, clarify_fallback],
                      id="clarify-fallback", next_run_time=now)
    scheduler.add_job(pool.prune, "interval", minutes=1, id="prune", next_run_time=now)
    scheduler.add_job(pool.quota.sweep, "interval", minutes=10, id="sweep-quota",
                      next_run_time=now)
    scheduler.add_job(EventLedger().sweep, "interval", minutes=10, id="sweep-events",
                      next_run_time=now)
    scheduler.add_job(shared_budgets.sweep, "interval", minutes=10, id="sweep-budgets",
                      next_run_time=now)
    scheduler.start()
    return scheduler
