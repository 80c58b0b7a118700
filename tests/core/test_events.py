"""Parsing Bridge SSE events and mapping them to and from `chat_message_log` rows."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

import pytest

from core.errors import InvalidInput
from core.events import (
    KINDS, ClarifyRequest, ContextCompacted, Done, LogRecord, RunError, Status, Step,
    TextDelta, ThinkingStatus, Todo, TodoUpdate, ToolEnd, ToolProgress, ToolStart,
    event_from_log, event_to_log, is_terminal, kind_of, parse_event,
)

AT = datetime(2026, 8, 2, 12, 0, tzinfo=UTC)
TODOS = [{"id": "1", "content": "read", "status": "completed"},
         {"id": "2", "content": "write", "status": "in_progress"}]

# (event name, data, expected event) for every kind of docs/bridge-protocol.md
WIRE = [
    ("text", {"text": "Hel"}, TextDelta(seq=1, at=AT, text="Hel")),
    ("thinking_status", {"content": "pondering"}, ThinkingStatus(seq=1, at=AT, content="pondering")),
    ("step", {"iteration": 2, "prev_tools": ["read_file"]},
     Step(seq=1, at=AT, iteration=2, prev_tools=("read_file",))),
    ("status", {"category": "lifecycle", "message": "compressing"},
     Status(seq=1, at=AT, category="lifecycle", message="compressing")),
    ("tool_progress", {"event_name": "tool.started", "tool_name": "web", "preview": "q"},
     ToolProgress(seq=1, at=AT, event_name="tool.started", tool_name="web", preview="q")),
    ("tool_progress", {"event_name": "reasoning.available", "tool_name": None, "preview": None},
     ToolProgress(seq=1, at=AT, event_name="reasoning.available")),
    ("tool_start", {"tool_call_id": "c1", "tool_name": "web", "args": {"q": "x", "n": [1, 2]}},
     ToolStart(seq=1, at=AT, tool_call_id="c1", tool_name="web", args={"q": "x", "n": [1, 2]})),
    ("tool_end", {"tool_call_id": "c1", "tool_name": "web", "result": "ok", "is_error": True},
     ToolEnd(seq=1, at=AT, tool_call_id="c1", tool_name="web", result="ok", is_error=True)),
    ("todo_update", {"todos": TODOS, "summary": {"total": 2}},
     TodoUpdate(seq=1, at=AT, todos=(Todo("1", "read", "completed"),
                                    Todo("2", "write", "in_progress")), summary={"total": 2})),
    ("clarify_request", {"clarify_id": "k1", "question": "Which?", "choices": ["a", "b"]},
     ClarifyRequest(seq=1, at=AT, clarify_id="k1", question="Which?", choices=("a", "b"))),
    ("clarify_request", {"clarify_id": "k2", "question": "Name?", "choices": []},
     ClarifyRequest(seq=1, at=AT, clarify_id="k2", question="Name?")),
    ("context_compacted", {"summary": "so far", "compacted_until": 12},
     ContextCompacted(seq=1, at=AT, summary="so far", compacted_until=12)),
    ("done", {"final_text": "All done."}, Done(seq=1, at=AT, final_text="All done.")),
    ("error", {"message": "stopped", "code": "aborted"},
     RunError(seq=1, at=AT, message="stopped", code="aborted")),
]


@pytest.mark.parametrize(("name", "data", "expected"), WIRE, ids=[w[0] for w in WIRE])
def test_parses_every_kind(name: str, data: dict, expected: object) -> None:
    assert parse_event("1", name, json.dumps(data), AT) == expected


def test_every_kind_of_the_protocol_is_covered() -> None:
    assert {w[0] for w in WIRE} == KINDS
    assert all(len(kind) <= 24 for kind in KINDS)


def test_extra_fields_are_ignored_and_id_becomes_seq() -> None:
    event = parse_event("42", "text", '{"text": "x", "new_field": 1}', AT)
    assert event == TextDelta(seq=42, at=AT, text="x")


def test_kind_and_terminal() -> None:
    assert [kind_of(w[2]) for w in WIRE] == [w[0] for w in WIRE]
    assert [w[0] for w in WIRE if is_terminal(w[2])] == ["done", "error"]


MALFORMED = [
    ("bad json", "3", "text", "{not json"),
    ("not an object", "3", "text", '["text"]'),
    ("unknown event", "3", "mystery", '{"text": "x"}'),
    ("httpx-sse default name", "3", "message", '{"text": "x"}'),
    ("missing id", "", "text", '{"text": "x"}'),
    ("id not a number", "abc", "text", '{"text": "x"}'),
    ("id zero", "0", "text", '{"text": "x"}'),
    ("negative id", "-2", "text", '{"text": "x"}'),
    ("missing field", "3", "tool_end", '{"tool_call_id": "c", "tool_name": "t"}'),
    ("wrong type", "3", "step", '{"iteration": "two"}'),
    ("bool for int", "3", "step", '{"iteration": true}'),
    ("bad todo status", "3", "todo_update", '{"todos": [{"id": "1", "content": "x", "status": "meh"}]}'),
    ("null text", "3", "text", '{"text": null}'),
]


@pytest.mark.parametrize(("case", "event_id", "name", "data"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_events_are_logged_and_skipped(
    caplog: pytest.LogCaptureFixture, case: str, event_id: str, name: str, data: str
) -> None:
    with caplog.at_level(logging.WARNING, logger="core.events"):
        assert parse_event(event_id, name, data, AT, run_id="run-7") is None
    assert "run-7" in caplog.text and "skipping" in caplog.text


@pytest.mark.parametrize(("name", "data", "event"), WIRE, ids=[w[0] for w in WIRE])
def test_log_rows_are_lossless(name: str, data: dict, event: object) -> None:
    record = event_to_log(event)  # type: ignore[arg-type]
    assert record.kind == name and record.seq == 1 and record.created_at == AT
    assert event_from_log(record) == event


def test_columns_hold_what_a_reader_expects() -> None:
    by_kind = {w[0]: event_to_log(w[2]) for w in reversed(WIRE)}  # type: ignore[arg-type]
    assert by_kind["text"].content == "Hel" and by_kind["text"].meta_json is None
    assert by_kind["status"].content == "compressing"
    assert json.loads(by_kind["status"].meta_json or "") == {"category": "lifecycle"}
    assert by_kind["tool_end"].tool_name == "web" and by_kind["tool_end"].content == "ok"
    assert json.loads(by_kind["todo_update"].meta_json or "")["todos"] == TODOS
    clarify = json.loads(by_kind["clarify_request"].meta_json or "")
    assert clarify == {"clarify_id": "k1", "choices": ["a", "b"]}
    assert by_kind["clarify_request"].content == "Which?"
    assert by_kind["done"].content == "All done."


def test_stored_time_comes_back_as_at() -> None:
    later = datetime(2030, 1, 1, tzinfo=UTC)
    record = LogRecord(seq=9, kind="text", content="x", created_at=later)
    assert event_from_log(record) == TextDelta(seq=9, at=later, text="x")


@pytest.mark.parametrize("record", [
    LogRecord(seq=1, kind="user_message", content="x", created_at=AT),
    LogRecord(seq=1, kind="text", content=None, created_at=AT),
    LogRecord(seq=1, kind="step", meta_json="{broken", created_at=AT),
    LogRecord(seq=1, kind="step", meta_json="[1]", created_at=AT),
    LogRecord(seq=0, kind="text", content="x", created_at=AT),
])
def test_unreadable_log_rows_raise_invalid_input(record: LogRecord) -> None:
    with pytest.raises(InvalidInput):
        event_from_log(record)
