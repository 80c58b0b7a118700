"""Run ownership across replicas: a replica drives a run only while it holds the
run's lease; it renews its leases, and one whose leases expired is presumed dead, so another
replica may claim its runs and resume them from the last stored seq."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta

from tortoise.exceptions import IntegrityError
from tortoise.expressions import Q

from core.outage import is_outage
from core.models import RunLease, utc_now

log = logging.getLogger(__name__)


class Leases:
    """The leases of one replica (`owner`)."""

    def __init__(self, owner: str | None = None, ttl: timedelta = timedelta(seconds=30),
                 clock: Callable[[], datetime] = utc_now) -> None:
        self.owner = owner or uuid.uuid4().hex
        self.ttl = ttl
        self._clock = clock

    async def claim(self, run_id: str) -> bool:
        """Take the run's lease if it is free, expired, or already ours."""
        now = self._clock()
        taken = await RunLease.filter(
            Q(run_id=run_id) & (Q(owner=self.owner) | Q(expires_at__lt=now))
        ).update(owner=self.owner, expires_at=now + self.ttl)
        if taken:
            return True
        try:
            await RunLease.create(run_id=run_id, owner=self.owner, expires_at=now + self.ttl)
        except IntegrityError:  # a live lease of another replica
            return False
        return True

    async def take_new(self, run_id: str) -> None:
        """The lease of a run id this replica just made up (nobody else can hold it): one
        insert, without `claim`'s look for a lease to take over first."""
        await RunLease.create(run_id=run_id, owner=self.owner, expires_at=self._clock() + self.ttl)

    async def renew(self, run_ids: Iterable[str]) -> int:
        """Extend our leases of these runs; returns how many we still hold."""
        ids = list(run_ids)
        if not ids:
            return 0
        return await RunLease.filter(run_id__in=ids, owner=self.owner).update(
            expires_at=self._clock() + self.ttl
        )

    async def release(self, run_ids: Iterable[str]) -> None:
        """Give up our leases (a run finished, or this replica stops cleanly). With the database
        away they stay until they expire: a finished run is never resumed, and a stopped
        replica's runs are resumed a TTL later instead of at once."""
        ids = list(run_ids)
        if not ids:
            return
        try:
            await RunLease.filter(run_id__in=ids, owner=self.owner).delete()
        except Exception as error:
            if not is_outage(error):
                raise
            log.warning("could not release %d leases, database unreachable (%s); they expire "
                        "in %s", len(ids), error, self.ttl)

    async def held_by_others(self) -> set[str]:
        """The runs other replicas hold live leases of (one query, for a takeover scan)."""
        rows = await RunLease.filter(expires_at__gte=self._clock()).exclude(
            owner=self.owner).values_list("run_id", flat=True)
        return {str(run_id) for run_id in rows}

    async def held_elsewhere(self, run_id: str) -> bool:
        """Whether another replica holds a live lease of this run."""
        return await RunLease.filter(
            run_id=run_id, expires_at__gte=self._clock()
        ).exclude(owner=self.owner).exists()
