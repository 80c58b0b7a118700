"""Parsing Bridge SSE events and mapping them to and from `chat_message_log` rows."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

import pytest

from core.errors import InvalidInput, MalformedEvent
from core.agent.events import (
    KINDS, TOOL_NAME_MAX, ApprovalRequest, Checkpoint, CheckpointApproval, CheckpointClarify,
    ClarifyRequest, ContextCompacted, Done, LogRecord,
    RunError, Status, Step, TextDelta, ThinkingStatus, Todo, TodoUpdate, ToolEnd, ToolProgress, ToolStart,
    Usage, event_from_log, event_to_log, is_terminal, kind_of, parse_event,
)
from core.store.models import ChatMessageLog, ClarifyPause
from core.text.safe_text import REPLACEMENT

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
    ("approval_request", {"approval_id": "a1", "tool": "terminal", "command": "rm -rf /tmp/x",
                          "reason": "delete in root path", "pattern_key": "delete in root path",
                          "choices": ["once", "deny"]},
     ApprovalRequest(seq=1, at=AT, approval_id="a1", command="rm -rf /tmp/x",
                     reason="delete in root path", pattern_key="delete in root path",
                     choices=("once", "deny"))),
    ("context_compacted", {"summary": "so far", "compacted_until": 12},
     ContextCompacted(seq=1, at=AT, summary="so far", compacted_until=12)),
    ("checkpoint", {"messages": [{"role": "user", "content": "hi"}], "clarify": None},
     Checkpoint(seq=1, at=AT, messages=({"role": "user", "content": "hi"},))),
    ("checkpoint", {"messages": [], "clarify": {"call_id": "c1", "clarify_id": "k1"}},
     Checkpoint(seq=1, at=AT, messages=(), clarify=CheckpointClarify("c1", "k1"))),
    ("checkpoint", {"messages": [], "clarify": None, "approval": {"approval_id": "a1"}},
     Checkpoint(seq=1, at=AT, messages=(), approval=CheckpointApproval("a1"))),
    ("usage", {"model": "m-1", "prompt_tokens": 100, "completion_tokens": 10, "cached_tokens": 40},
     Usage(seq=1, at=AT, model="m-1", prompt_tokens=100, completion_tokens=10, cached_tokens=40)),
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
    with caplog.at_level(logging.WARNING, logger="core.agent.events"):
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


# --- text from outside, made storable on the way in ----------------------------------------

R = REPLACEMENT
UNSTORABLE = [  # (event name, the data as a Bridge could send it, the event it must give)
    ("text", r'{"text": "a\u0000b"}', TextDelta(seq=1, at=AT, text=f"a{R}b")),
    ("text", r'{"text": "lone \ud83d here"}', TextDelta(seq=1, at=AT, text=f"lone {R} here")),
    ("text", r'{"text": "pair \ud83d\ude00 kept"}', TextDelta(seq=1, at=AT, text="pair 😀 kept")),
    ("text", '{"text": "raw \x00 NUL"}', TextDelta(seq=1, at=AT, text=f"raw {R} NUL")),
    ("tool_start", r'{"tool_call_id": "c\u0000", "tool_name": "t", "args": {"k\ud800": ["\u0000"]}}',
     ToolStart(seq=1, at=AT, tool_call_id=f"c{R}", tool_name="t", args={f"k{R}": [R]})),
    ("tool_end", r'{"tool_call_id": "c", "tool_name": "t", "result": "\udfff\u0000"}',
     ToolEnd(seq=1, at=AT, tool_call_id="c", tool_name="t", result=R * 2)),
    ("done", r'{"final_text": "end\u0000\udc00"}', Done(seq=1, at=AT, final_text=f"end{R}{R}")),
    ("clarify_request", r'{"clarify_id": "k", "question": "which\ud800?", "choices": ["\u0000"]}',
     ClarifyRequest(seq=1, at=AT, clarify_id="k", question=f"which{R}?", choices=(R,))),
]


@pytest.mark.parametrize(("name", "data", "expected"), UNSTORABLE)
def test_nul_and_lone_surrogates_are_replaced_not_skipped(name: str, data: str,
                                                          expected: object) -> None:
    assert parse_event("1", name, data, AT) == expected


def test_over_long_tool_names_are_cut_to_their_column() -> None:
    assert TOOL_NAME_MAX == ChatMessageLog._meta.fields_map["tool_name"].max_length
    long = "t" * 500
    start = parse_event("1", "tool_start", json.dumps({"tool_call_id": "c", "tool_name": long}), AT)
    progress = parse_event("2", "tool_progress",
                           json.dumps({"event_name": "tool.started", "tool_name": long}), AT)
    assert isinstance(start, ToolStart) and start.tool_name == "t" * TOOL_NAME_MAX
    assert isinstance(progress, ToolProgress) and progress.tool_name == "t" * TOOL_NAME_MAX


VITAL_MALFORMED = [
    ("done without its text", "done", '{"final": "x"}'),
    ("done not an object", "done", '"all done"'),
    ("done with bad JSON", "done", '{"final_text": '),
    ("done without an id", "done", '{"final_text": "x"}'),
    ("error with a list message", "error", '{"message": ["x"]}'),
    ("question without an id", "clarify_request", '{"question": "Which?"}'),
    ("approval without a command", "approval_request", '{"approval_id": "a1"}'),
    ("question id too long for its column", "clarify_request",
     json.dumps({"clarify_id": "k" * 65, "question": "Which?"})),
    ("question with choices of numbers", "clarify_request",
     '{"clarify_id": "k", "question": "Which?", "choices": [1, 2]}'),
]


@pytest.mark.parametrize(("case", "name", "data"), VITAL_MALFORMED, ids=[v[0] for v in VITAL_MALFORMED])
def test_a_malformed_end_or_question_fails_the_run_with_a_reason(case: str, name: str,
                                                                 data: str) -> None:
    event_id = "" if "without an id" in case else "7"
    with pytest.raises(MalformedEvent) as raised:
        parse_event(event_id, name, data, AT, run_id="run-7")
    assert f"malformed {name} event" in raised.value.message
    assert "cannot go on" in raised.value.message


def test_the_question_id_bound_is_its_column() -> None:
    column = ClarifyPause._meta.fields_map["clarify_id"].max_length
    ok = parse_event("1", "clarify_request",
                     json.dumps({"clarify_id": "k" * column, "question": "?"}), AT)
    assert isinstance(ok, ClarifyRequest)
