"""The log buffer's writes: every row of every kind as `event_to_log` maps it, each once, even
when a batch whose commit was in doubt is written again."""

from __future__ import annotations

import asyncio
import logging
import uuid
from datetime import UTC, datetime

import pytest

from core.chat import sessions
from core.agent.events import (
    Checkpoint, CheckpointClarify, ClarifyRequest, Done, Event, LogRecord, Status, TextDelta, Todo, TodoUpdate, ToolEnd,
    ToolStart, event_from_log, event_to_log,
)
from core.store.models import ChatMessageLog, MessageStatus, RunCheckpoint
from core.runtime.checkpoints import StoredCheckpoint, load_checkpoint
from core.runtime.log_buffer import DROPPED_META, LogBuffer, insert_rows
from core.runtime.records import insert_turn
from tests.conftest import BACKEND
from tests.fakes.changes import WAIT

AT = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
EVENTS: list[Event] = [
    TextDelta(seq=1, at=AT, text="Let me look"),
    ToolStart(seq=2, at=AT, tool_call_id="c1", tool_name="web", args={"q": "x"}),
    ToolEnd(seq=3, at=AT, tool_call_id="c1", tool_name="web", result="found"),
    TodoUpdate(seq=4, at=AT, todos=(Todo("1", "read", "completed"),)),
    Status(seq=5, at=AT, category="lifecycle", message="thinking"),
    ClarifyRequest(seq=6, at=AT, clarify_id="k1", question="Which?", choices=("a", "b")),
    TextDelta(seq=7, at=AT, text=""),
    Done(seq=8, at=AT, final_text="done"),
]


async def _message_id() -> int:
    session = await sessions.create_session()
    turn = await insert_turn(session.id, uuid.uuid4().hex, MessageStatus.RUNNING, text="go")
    return turn.assistant.id


async def _stored(message_id: int) -> list[LogRecord]:
    rows = await ChatMessageLog.filter(message_id=message_id).order_by("seq")
    return [LogRecord(seq=r.seq, kind=r.kind, content=r.content, tool_name=r.tool_name,
                      meta_json=r.meta_json, created_at=r.created_at) for r in rows]


async def test_every_kind_is_stored_as_event_to_log_maps_it(db: str) -> None:
    message_id = await _message_id()
    buffer = LogBuffer()
    for event in EVENTS:
        buffer.add(message_id, event)
    await buffer.flush()
    assert await _stored(message_id) == [event_to_log(e) for e in EVENTS]
    assert buffer.persisted_seq(message_id) == 8 and buffer.pending == 0


async def test_a_batch_written_again_stores_each_row_once(db: str) -> None:
    message_id = await _message_id()
    rows = [(message_id, seq, "text", f"t{seq}", None, None, AT) for seq in range(1, 301)]
    await insert_rows(rows[:200])
    await insert_rows(rows[:200])  # the same flush again: its commit was in doubt
    await insert_rows(rows[150:])  # overlapping: only the new rows go in
    stored = await _stored(message_id)
    assert [r.seq for r in stored] == list(range(1, 301))
    assert [r.content for r in stored] == [f"t{seq}" for seq in range(1, 301)]


async def test_a_flush_cancelled_mid_write_keeps_its_rows_for_the_next_one(db: str) -> None:
    """A stopping pool cancels its flusher, maybe in the middle of a write: the rows it held
    stay pending, so the pool's last flush writes them (or says they are unwritten)."""
    message_id = await _message_id()
    buffer = LogBuffer()
    for event in EVENTS[:2]:
        buffer.add(message_id, event)
    flushing = asyncio.create_task(buffer.flush())
    async with asyncio.timeout(WAIT):
        while buffer.pending:  # until the flush has taken the rows
            await asyncio.sleep(0)
    assert not flushing.done()  # it awaits the database with them
    flushing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await flushing
    assert buffer.pending == 2
    await buffer.flush()  # written whether or not the cancelled one committed: each row once
    assert buffer.pending == 0
    assert await ChatMessageLog.filter(message_id=message_id).order_by("seq").values_list(
        "seq", flat=True) == [1, 2]


async def test_a_refused_batch_is_split_the_bad_rows_become_placeholders_and_nothing_waits(
    db: str, caplog: pytest.LogCaptureFixture
) -> None:
    """One batch of three runs' rows: one row names a message that is gone (refused by the
    foreign key on both backends), one has an over-long tool name and one a NUL (refused by
    PostgreSQL only: SQLite stores both as they are). Before, the whole batch stayed queued
    and every later flush of the replica failed on it."""
    first, second = await _message_id(), await _message_id()
    gone = second + 1000
    buffer = LogBuffer()
    for seq in range(1, 6):
        buffer.add(first, TextDelta(seq=seq, at=AT, text=f"a{seq}"))
    buffer.add(gone, TextDelta(seq=1, at=AT, text="the message was deleted meanwhile"))
    buffer.add(second, TextDelta(seq=1, at=AT, text="b1"))
    buffer.add(second, TextDelta(seq=2, at=AT, text="NUL \x00 here"))
    buffer.add(second, ToolStart(seq=3, at=AT, tool_call_id="c", tool_name="t" * 200))
    buffer.add(second, TextDelta(seq=4, at=AT, text="b4"))
    with caplog.at_level(logging.ERROR, logger="core.runtime.log_buffer"):
        await buffer.flush()
    assert buffer.pending == 0  # nothing left to poison the next flush
    assert [r.content for r in await _stored(first)] == [f"a{seq}" for seq in range(1, 6)]
    stored = await _stored(second)
    assert [r.seq for r in stored] == [1, 2, 3, 4]
    assert (stored[0].content, stored[3].content) == ("b1", "b4")
    if BACKEND == "postgres":
        for row, kind in ((stored[1], "text"), (stored[2], "tool_start")):
            assert (row.kind, row.meta_json) == ("status", DROPPED_META)
            assert row.content.startswith(f"A {kind} event (seq {row.seq}) could not be stored")
            assert isinstance(event_from_log(row), Status)  # replays as a status line
        assert "invalid byte sequence" in stored[1].content and "too long" in stored[2].content
    else:
        assert stored[1].content == "NUL \x00 here" and stored[2].tool_name == "t" * 200
    assert not await ChatMessageLog.filter(message_id=gone).exists()
    assert f"log row 1 of message {gone} (text) was refused" in caplog.text
    assert "was refused too" in caplog.text and "the row is dropped" in caplog.text

    buffer.add(first, TextDelta(seq=6, at=AT, text="a6"))  # the next flush just works
    await buffer.flush()
    assert [r.seq for r in await _stored(first)] == list(range(1, 7))


def _checkpoint(seq: int, text: str, clarify: CheckpointClarify | None = None) -> Checkpoint:
    messages = ({"role": "user", "content": text}, {"role": "assistant", "content": text * 3})
    return Checkpoint(seq=seq, at=AT, messages=messages, clarify=clarify)


async def test_a_checkpoint_is_stored_whole_or_not_at_all_and_never_moves_back(
    db: str, caplog: pytest.LogCaptureFixture
) -> None:
    first, second = await _message_id(), await _message_id()
    gone = second + 1000
    buffer = LogBuffer()
    buffer.add(first, TextDelta(seq=1, at=AT, text="a1"))
    buffer.checkpoint(first, _checkpoint(1, "older"))
    buffer.checkpoint(first, _checkpoint(2, "latest", CheckpointClarify("call-1", "k1")))
    buffer.checkpoint(gone, _checkpoint(5, "its message was deleted meanwhile"))
    buffer.checkpoint(second, _checkpoint(3, "second"))
    with caplog.at_level(logging.ERROR, logger="core.runtime.checkpoints"):
        await buffer.flush()

    stored = await load_checkpoint(first)
    assert stored == StoredCheckpoint(2, [dict(m) for m in _checkpoint(2, "latest").messages],
                                      "call-1", "k1")
    assert (await load_checkpoint(second)).seq == 3  # the refused one held nobody back
    assert await load_checkpoint(gone) is None and not await RunCheckpoint.filter(
        message_id=gone).exists()  # nothing of it: no half, no split
    assert f"the checkpoint (seq 5) of message {gone} was refused and is dropped" in caplog.text
    assert [r.seq for r in await _stored(first)] == [1]  # never a log row

    buffer.checkpoint(first, _checkpoint(1, "a replayed older one"))
    await buffer.flush()
    assert (await load_checkpoint(first)).seq == 2  # never moved back
    buffer.checkpoint(first, _checkpoint(7, "next step"))
    await buffer.flush()
    assert (await load_checkpoint(first)).messages[0]["content"] == "next step"
