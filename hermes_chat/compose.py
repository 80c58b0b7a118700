"""The composition root of `serve`: every part built once, from the settings, and passed down."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta

from core.agent.bridge.fleet import BridgeFleet
from core.agent.catalogue import Catalogue
from core.chat.attachments import FileReader
from core.config import Settings
from core.conversation.scheduled_prompts import ScheduledPrompts
from core.edge.run_quota import RunQuota
from core.runtime.jobs import start_jobs
from core.runtime.leases import Leases
from core.runtime.metrics import RunMetrics
from core.runtime.notify import listening
from core.runtime.pool import RunPool
from core.runtime.recovery import keep_taking_over, recover
from core.runtime.singleton import UPKEEP_HERE, SchedulerLock, Upkeep
from core.store import db
from core.usage.limits import SpendLimits
from hermes_chat.bridge_process import BridgeEndpoint, BridgeSupervisor, bridge_child
from hermes_chat.startup import reaching_database, read_catalogue

log = logging.getLogger("hermes_chat.serve")


@dataclass(frozen=True, slots=True)
class Parts:
    """What the servers and bots of `serve` share."""

    settings: Settings
    catalogue: Catalogue
    bridge: BridgeFleet  # every Bridge of HERMES_BRIDGE_URL (or the child), as one
    pool: RunPool
    bridge_child: BridgeSupervisor | None = None  # None: an external Bridge
    files: FileReader | None = None  # the workers that read attachments (None: each bot its own)
    schedules: ScheduledPrompts | None = None  # started once the platforms serve theirs


@asynccontextmanager
async def running_parts(settings: Settings,
                        environ: Mapping[str, str] | None = None) -> AsyncIterator[Parts]:
    """Database, Bridge (child or external), run pool with recovery and takeover of dead
    replicas' runs, the log listener (PostgreSQL), the upkeep jobs (on one replica), and the
    worker processes that read attachments (started at the first file, stopped on exit)."""
    catalogue = read_catalogue(settings)
    lock = SchedulerLock(settings.database_url, settings.run_lease_seconds)
    files = FileReader(settings.attachment_limits)  # no worker runs before the first file
    try:
        async with reaching_database(settings.database_url):
            leader = await lock.try_acquire()  # on SQLite a second serve stops here, saying why
            await _migrate(settings.database_url)
            await db.open_database(settings.database_url)
        metrics = RunMetrics()
        async with bridge_child(settings, catalogue, environ) as endpoint, \
                listening(settings.database_url) as notices, \
                BridgeFleet.over_http(_bridge_urls(settings, endpoint), token=endpoint.token,
                                      sleep=metrics.reconnect_pause) as bridge:
            leases = Leases(ttl=timedelta(seconds=settings.run_lease_seconds))
            pool = RunPool(bridge, catalogue, max_active_runs=settings.max_active_runs,
                           metrics=metrics, leases=leases, log_notices=notices,
                           patience=settings.database_patience,
                           quota=RunQuota(settings.runs_per_user_per_minute),
                           limits=SpendLimits(settings.spend_limits),
                           run_buffer_bytes=settings.run_buffer_bytes,
                           history_attachment_bytes=settings.history_attachment_bytes,
                           channel_defaults=settings.channel_defaults)
            await pool.open()
            fallback = timedelta(hours=settings.clarify_fallback_hours)
            upkeep = Upkeep(lock, lambda: start_jobs(pool, fallback),
                            every=settings.run_lease_seconds / 2)
            tasks: list[asyncio.Task[None]] = []
            schedules = ScheduledPrompts(
                pool, files, retry=timedelta(seconds=settings.intake_retry_seconds))
            try:
                log.info("runtime: recovered %d runs in flight; %s", await recover(pool),
                         UPKEEP_HERE if leader else "another replica runs the upkeep jobs")
                # after recovery: the jobs run at once, and they stop runs this replica drives
                tasks.append(asyncio.create_task(upkeep.run(), name="upkeep"))
                tasks.append(asyncio.create_task(keep_taking_over(pool), name="takeover"))
                yield Parts(settings, catalogue, bridge, pool, endpoint.child, files, schedules)
            finally:
                schedules.stop()
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                await pool.close()  # flushes every log row; runs stay resumable
    finally:
        await files.close()
        await lock.release()
        await db.close_database()


def _bridge_urls(settings: Settings, endpoint: BridgeEndpoint) -> tuple[str, ...]:
    """The child Bridge, or each external one HERMES_BRIDGE_URL lists."""
    return (endpoint.url,) if endpoint.child is not None else settings.bridge_urls


async def _migrate(database_url: str) -> None:
    applied = await db.migrate(database_url)
    names = f": {', '.join(applied)}" if applied else ""
    log.info("database: %s, %d new migrations applied%s", db.describe(database_url),
             len(applied), names)
