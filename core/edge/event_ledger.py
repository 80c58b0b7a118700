"""Every platform event handled once across replicas: the first replica to record an event id
takes it, and a redelivery of it (Slack's retry, or the same event sent to another replica)
is dropped wherever it arrives.

The ids are rows of `handled_event`, inserted or refused by their unique key in one statement
(on the edge's own connections, core/store/db.py: an event is never held up behind the
runtime's transactions), so no two replicas both take one. Slack redelivers within minutes (three retries over about
five); the rows are kept for `EVENT_TTL` and then swept by an upkeep job. The in-process
memories of core/edge/dedupe.py stay in front as the cheap first check.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from tortoise.exceptions import IntegrityError

from core.store.db import edge_connection
from core.store.models import HandledEvent, utc_now
from core.store.outage import is_outage

log = logging.getLogger(__name__)
EVENT_TTL = timedelta(hours=1)  # far past Slack's last retry of an event
MAX_ID = 128  # Slack's ids are ~11 characters; anything longer is not an id of theirs


class EventLedger:
    """`await ledger.first("slack", event_id)` is True for exactly one caller among replicas."""

    def __init__(self, ttl: timedelta = EVENT_TTL, clock: Callable[[], datetime] = utc_now) -> None:
        self.ttl = ttl
        self._clock = clock

    async def first(self, platform: str, event_id: str) -> bool:
        """Record the event; False when another delivery of it was recorded already. With the
        database away the event is let through (an event lost would be worse than one
        handled twice, and its handling reports the outage itself)."""
        key = f"{platform}:{event_id[:MAX_ID]}"
        try:
            await HandledEvent.create(event_key=key, at=self._clock(), using_db=edge_connection())
        except IntegrityError:
            return False
        except Exception as error:
            if not is_outage(error):
                raise
            log.warning("could not record event %s, database unreachable (%s)", key, error)
        return True

    async def sweep(self) -> int:
        """Forget the events older than the TTL (no redelivery comes that late); an upkeep job."""
        return await HandledEvent.filter(at__lt=self._clock() - self.ttl).delete()
