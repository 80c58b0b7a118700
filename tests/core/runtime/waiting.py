"""Awaiting a run's updates with a deadline (no sleeping for time to pass)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from core.runtime.pool import RunPool
from core.runtime.updates import RunUpdate
from core.store.models import ChatMessage, ChatMessageLog
from tests.fakes.changes import WAIT


async def until(pool: RunPool, run_id: str, predicate: Callable[[RunUpdate], bool]) -> RunUpdate:
    """The first update of `run_id` that satisfies `predicate` (the current view counts)."""
    subscription = pool.subscribe(run_id)
    try:
        async with asyncio.timeout(WAIT):
            while True:
                for update in await subscription.next():
                    if predicate(update):
                        return update
    finally:
        pool.unsubscribe(subscription)


async def finished(pool: RunPool, run_id: str) -> RunUpdate:
    return await until(pool, run_id, lambda u: u.finished)


async def stored_seqs(message_id: int) -> list[int]:
    return await ChatMessageLog.filter(message_id=message_id).order_by("seq").values_list(
        "seq", flat=True
    )


async def message(message_id: int) -> ChatMessage:
    return await ChatMessage.get(id=message_id)
