"""A task cancelled inside SQLite's BEGIN leaves no lock behind (a bot stopping mid-write)."""

from __future__ import annotations

import asyncio

import pytest
from tortoise.backends.sqlite.client import SqliteTransactionWrapper

from core.chat import sessions
from core.store.models import ChatSession
from core.store.outage import transaction
from tests.conftest import BACKEND

pytestmark = pytest.mark.skipif(BACKEND != "sqlite", reason="SQLite's single-connection lock")


async def test_a_task_cancelled_inside_begin_does_not_hold_the_connection(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    await sessions.create_session()
    in_begin = asyncio.Event()
    begin = SqliteTransactionWrapper.begin

    async def slow_begin(self: SqliteTransactionWrapper) -> None:
        in_begin.set()
        await asyncio.Event().wait()  # the cancellation arrives here, as mid-BEGIN
        await begin(self)

    monkeypatch.setattr(SqliteTransactionWrapper, "begin", slow_begin)

    async def write() -> None:
        async with transaction():
            await ChatSession.all().update(title="never")

    task = asyncio.create_task(write())
    await in_begin.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    monkeypatch.setattr(SqliteTransactionWrapper, "begin", begin)

    async with asyncio.timeout(5):  # without the fix: waits for the lock forever
        async with transaction():
            await ChatSession.all().update(title="after")
    assert (await ChatSession.get()).title == "after"
