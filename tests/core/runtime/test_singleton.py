"""One scheduler among replicas: the advisory lock on PostgreSQL, a refusal on SQLite."""

from __future__ import annotations

import pytest

from core.db import is_sqlite
from core.errors import Conflict
from core.runtime.singleton import SchedulerLock


async def test_only_one_replica_holds_the_scheduler_lock(db: str) -> None:
    first, second = SchedulerLock(db), SchedulerLock(db)
    assert await first.try_acquire()
    if is_sqlite(db):
        with pytest.raises(Conflict, match="SQLite runs one replica only"):
            await second.try_acquire()
    else:
        assert not await second.try_acquire()
    await first.release()  # the holder goes away ...
    assert await second.try_acquire()  # ... and the other one takes over
    await second.release()
