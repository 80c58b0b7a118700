"""The log buffer's writes: every row of every kind as `event_to_log` maps it, each once, even
when a batch whose commit was in doubt is written again."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from core import sessions
from core.events import (
    ClarifyRequest, Done, Event, LogRecord, Status, TextDelta, Todo, TodoUpdate, ToolEnd,
    ToolStart, event_to_log,
)
from core.models import ChatMessageLog, MessageStatus
from core.runtime.log_buffer import LogBuffer, insert_rows
from core.runtime.records import insert_turn

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
