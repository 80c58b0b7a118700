"""Pure helpers of the admin edge and its read models."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from admin.errors import camel
from admin.runs.stream import sse_message
from core.agent.events import ClarifyRequest, Todo, TodoUpdate
from core.chat.session_queries import preview

AT = datetime(2026, 11, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("name", "spelled"),
    [("model_id", "modelId"), ("skill_folder", "skillFolder"), ("q", "q"), ("keep_history", "keepHistory")],
)
def test_core_field_names_are_spelled_camel_case(name: str, spelled: str) -> None:
    assert camel(name) == spelled


def test_previews_are_one_trimmed_line() -> None:
    assert preview("  two\n\nlines\t here ") == "two lines here"
    assert preview("x" * 10, limit=5) == "xxxx…"
    assert preview("exact", limit=5) == "exact"


def test_events_are_framed_as_the_bridge_sends_them() -> None:
    clarify = ClarifyRequest(seq=8, at=AT, clarify_id="q1", question="Which\nday?", choices=("Mon",))
    assert sse_message(clarify).encode() == (
        b'id: 8\r\nevent: clarify_request\r\n'
        b'data: {"clarify_id":"q1","question":"Which\\nday?","choices":["Mon"]}\r\n\r\n'
    )
    todos = TodoUpdate(seq=2, at=AT, todos=(Todo("1", "Read", "completed"),))
    assert sse_message(todos).data == (
        '{"todos":[{"id":"1","content":"Read","status":"completed"}],"summary":{}}'
    )
