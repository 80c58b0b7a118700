"""Every platform event handled once across replicas: the first replica to record an event id
takes it, and a redelivery of it (Slack's retry, or the same event sent to another replica)
is dropped wherever it arrives.

The ids are rows of `handled_event`, inserted or refused by their unique key in one statement
(on the edge's own connections, core/store/db.py: an event is never held up behind the
runtime's transactions), so no two replicas both take one. Slack redelivers within minutes (three retries over about
five); the rows are kept for `EVENT_TTL` and then swept by an upkeep job. The in-process
memories of core/edge/dedupe.py stay in front as the cheap first check.

An inbox too: the platform was told "received" as the event was taken, so it never sends it
again, and a replica that dies (kill -9) or stops (its tasks cancelled) before the event's
turn is written would lose the message. A message's event is taken with its body and marked
`done` when its handling ends, however it ended; `unfinished` hands the bodies of events
taken long ago and never done to whoever handles them again (each claimed by one replica).
The marks are written together, DONE_EVERY seconds after the first of them (a burst's
hundred messages cost a few statements, not a hundred, on the connections their intake
needs); a replica that dies first leaves those events to be handled again, which starts
nothing for a message whose turn was written.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from tortoise.exceptions import IntegrityError
from tortoise.expressions import Q

from core.store.db import edge_connection
from core.store.models import HandledEvent, utc_now
from core.store.outage import is_outage

log = logging.getLogger(__name__)
EVENT_TTL = timedelta(hours=1)  # far past Slack's last retry of an event
DONE_EVERY = 0.5  # seconds the done marks of events are gathered before one write
MAX_ID = 128  # Slack's ids are ~11 characters; anything longer is not an id of theirs


class EventLedger:
    """`await ledger.first("slack", event_id)` is True for exactly one caller among replicas."""

    def __init__(self, ttl: timedelta = EVENT_TTL, clock: Callable[[], datetime] = utc_now) -> None:
        self.ttl = ttl
        self._clock = clock
        self._done: set[str] = set()  # event keys whose handling ended, not yet written
        self._writing: asyncio.Task[None] | None = None

    async def first(self, platform: str, event_id: str, body: str | None = None) -> bool:
        """Record the event (with `body`, what handles it again if its handling never ends);
        False when another delivery of it was recorded already. With the database away the
        event is let through (an event lost would be worse than one handled twice, and its
        handling reports the outage itself)."""
        key = _key(platform, event_id)
        try:
            await HandledEvent.create(event_key=key, at=self._clock(), body=body,
                                      using_db=edge_connection())
        except IntegrityError:
            return False
        except Exception as error:
            if not is_outage(error):
                raise
            log.warning("could not record event %s, database unreachable (%s)", key, error)
        return True

    def done(self, platform: str, event_id: str) -> None:
        """The event's handling ended (its turn written, or nothing to do): never again.
        Written with the others of the next DONE_EVERY seconds (`flush` writes them now)."""
        self._done.add(_key(platform, event_id))
        if self._writing is None or self._writing.done():
            self._writing = asyncio.create_task(self._write_soon(), name="event-ledger-done")

    async def flush(self) -> None:
        """Write the done marks not written yet."""
        keys, self._done = self._done, set()
        if not keys:
            return
        try:
            await HandledEvent.filter(event_key__in=keys).using_db(edge_connection()).update(
                done_at=self._clock(), body=None)
        except Exception as error:
            if not is_outage(error):
                raise
            log.warning("could not mark %d events done, database unreachable (%s); they will "
                        "be handled again, which starts nothing twice", len(keys), error)

    async def close(self) -> None:
        """Write what is pending and stop (a replica stopping)."""
        if self._writing is not None:
            self._writing.cancel()
            await asyncio.gather(self._writing, return_exceptions=True)
            self._writing = None
        await self.flush()

    async def _write_soon(self) -> None:
        await asyncio.sleep(DONE_EVERY)
        await self.flush()

    async def unfinished(self, platform: str, after: timedelta,
                         limit: int = 100) -> list[tuple[str, str]]:
        """(event id, body) of `platform`'s events taken more than `after` ago whose handling
        never ended, oldest first, each now claimed by this caller: no other replica takes it
        up for `after` (a claim older than that, whose replica died too, is taken over)."""
        now = self._clock()
        before, prefix = now - after, f"{platform}:"
        stale = await HandledEvent.filter(
            event_key__startswith=prefix, body__isnull=False, done_at__isnull=True, at__lt=before,
        ).filter(Q(claimed_at__isnull=True) | Q(claimed_at__lt=before)).order_by("at").limit(limit)
        claimed = []
        for event in stale:
            took = await HandledEvent.filter(id=event.id, done_at__isnull=True).filter(
                Q(claimed_at__isnull=True) | Q(claimed_at__lt=before)).using_db(
                edge_connection()).update(claimed_at=now)
            if took and event.body is not None:
                claimed.append((event.event_key.removeprefix(prefix), event.body))
        return claimed

    async def sweep(self) -> int:
        """Forget the events older than the TTL (no redelivery comes that late); an upkeep job."""
        return await HandledEvent.filter(at__lt=self._clock() - self.ttl).delete()


def _key(platform: str, event_id: str) -> str:
    return f"{platform}:{event_id[:MAX_ID]}"
