"""Run ownership across replicas: a replica drives a run only while it holds the
run's lease; it renews its leases, and one whose leases expired is presumed dead, so another
replica may claim its runs and resume them from the last stored seq."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

from tortoise.exceptions import IntegrityError
from tortoise.expressions import Q
from tortoise.models import Model

from core.store.outage import is_outage
from core.store.models import RunLease, utc_now

log = logging.getLogger(__name__)


class LeaseRows:
    """Leases of one replica (`owner`) on the rows of a table (`model`, one row per `key`
    value, with `owner` and `expires_at` columns): a row is taken with one conditional update
    (free, expired, or already ours) or one insert, renewed while held, released when done.
    Run leases and Discord shard claims are this one rule."""

    def __init__(self, model: type[Model], key: str, owner: str | None = None,
                 ttl: timedelta = timedelta(seconds=30),
                 clock: Callable[[], datetime] = utc_now) -> None:
        self.model = model
        self.key = key
        self.owner = owner or uuid.uuid4().hex
        self.ttl = ttl
        self._clock = clock

    async def claim(self, name: Any, **values: Any) -> bool:
        """Take the row's lease if it is free, expired, or already ours (`values`: more
        columns to set on it)."""
        now = self._clock()
        taken = await self.model.filter(
            Q(**{self.key: name}) & (Q(owner=self.owner) | Q(expires_at__lt=now))
        ).update(owner=self.owner, expires_at=now + self.ttl, **values)
        if taken:
            return True
        try:
            await self.model.create(**{self.key: name, "owner": self.owner,
                                       "expires_at": now + self.ttl, **values})
        except IntegrityError:  # a live lease of another replica
            return False
        return True

    async def renew(self, names: Iterable[Any]) -> int:
        """Extend our leases of these rows; returns how many we still hold."""
        ids = list(names)
        if not ids:
            return 0
        return await self.model.filter(**{f"{self.key}__in": ids}, owner=self.owner).update(
            expires_at=self._clock() + self.ttl
        )

    async def release(self, names: Iterable[Any]) -> None:
        """Give up our leases (a run finished, or this replica stops cleanly). With the database
        away they stay until they expire: a finished run is never resumed, and a stopped
        replica's runs are resumed a TTL later instead of at once."""
        ids = list(names)
        if not ids:
            return
        try:
            await self.model.filter(**{f"{self.key}__in": ids}, owner=self.owner).delete()
        except Exception as error:
            if not is_outage(error):
                raise
            log.warning("could not release %d leases, database unreachable (%s); they expire "
                        "in %s", len(ids), error, self.ttl)

    async def live_others(self) -> list[dict[str, Any]]:
        """The rows other replicas hold live leases of (one query)."""
        return await self.model.filter(expires_at__gte=self._clock()).exclude(
            owner=self.owner).values()


class Leases(LeaseRows):
    """The run leases of one replica (`owner`)."""

    def __init__(self, owner: str | None = None, ttl: timedelta = timedelta(seconds=30),
                 clock: Callable[[], datetime] = utc_now) -> None:
        super().__init__(RunLease, "run_id", owner, ttl, clock)

    async def take_new(self, run_id: str) -> None:
        """The lease of a run id this replica just made up (nobody else can hold it): one
        insert, without `claim`'s look for a lease to take over first."""
        await RunLease.create(run_id=run_id, owner=self.owner, expires_at=self._clock() + self.ttl)

    async def held_by_others(self, run_ids: Iterable[str] | None = None) -> set[str]:
        """The runs (of `run_ids`, or all) other replicas hold live leases of: one query, for
        a takeover scan or a renewal pass, however many runs it asks about."""
        query = RunLease.filter(expires_at__gte=self._clock()).exclude(owner=self.owner)
        if run_ids is not None:
            query = query.filter(run_id__in=list(run_ids))
        return {str(run_id) for run_id in await query.values_list("run_id", flat=True)}
