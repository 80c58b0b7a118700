"""The shared words of live views and footers."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, UTC

from core.conversation import presenting
from core.agent.events import Done, TextDelta, TodoUpdate, Todo, ToolEnd, ToolStart, Usage
from core.store.models import MessageStatus, PauseKind, PauseStatus
from core.conversation.presenting import APPROVAL_LABELS, approval_outcome, approval_question
from core.runtime.updates import PauseView, RunUpdate
from core.agent.thinking import ThinkingState, fold

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _state() -> ThinkingState:
    events = [
        TextDelta(text="first line\nsecond line", seq=1, at=T0),
        ToolStart(tool_call_id="a", tool_name="todo", args={}, seq=2, at=T0),
        ToolEnd(tool_call_id="a", tool_name="todo", result="{}", is_error=False, seq=3, at=T0),
        TodoUpdate(todos=(Todo("1", "plan", "completed"), Todo("2", "write", "in_progress")),
                   summary={}, seq=4, at=T0),
        ToolStart(tool_call_id="b", tool_name="web", args={}, seq=5, at=T0 + timedelta(seconds=75)),
    ]
    return fold(events)


def _update(status: MessageStatus, state: ThinkingState, **kw) -> RunUpdate:
    return RunUpdate("r", 1, 1, 2, status, state, **kw)


def test_status_lines_follow_the_run() -> None:
    state = _state()
    assert presenting.status_line(_update(MessageStatus.RUNNING, state)) == "🔧 Running web"
    assert presenting.status_line(_update(MessageStatus.QUEUED, ThinkingState(), position=2)) == (
        "⏳ Queued (#2 in line)")
    assert presenting.status_line(_update(MessageStatus.FAILED, state, error="boom")) == (
        "⚠️ Failed: boom")
    done = fold([Done(final_text="x", seq=6, at=T0 + timedelta(seconds=80))], state)
    assert presenting.status_line(_update(MessageStatus.SUCCESS, done)) == "✅ Done in 1m 20s"


def test_checklist_tools_and_footer() -> None:
    state = _state()
    assert presenting.todo_lines(state.todos) == ["☑ plan", "▶ write"]
    assert presenting.recent_tools(state, 1) == ["… and 1 earlier", "… web"]
    update = _update(MessageStatus.SUCCESS, state, model_id="fast", skill_folder="readme-gen")
    assert presenting.footer(update) == "1m 15s · 2 tool calls · 1/2 todos · model fast · skill readme-gen"
    assert presenting.thinking_tail(state, 11) == "…second line"


def _spent(*costs: float | None, cached: int = 0) -> ThinkingState:
    calls = [Usage(seq=10 + i, at=T0, prompt_tokens=1000, completion_tokens=234,
                   cached_tokens=cached, cost=cost) for i, cost in enumerate(costs)]
    return fold([*calls, Done(final_text="x", seq=20, at=T0 + timedelta(seconds=80))], _state())


def test_the_footer_shows_tokens_and_cost_as_show_usage_says() -> None:
    done = _update(MessageStatus.SUCCESS, _spent(0.0021, 0.0021), model_id="fast")
    shown = presenting.UsageShown
    base = "1m 20s · 2 tool calls · 1/2 todos · model fast"
    assert presenting.footer(done) == base  # SHOW_USAGE=off, the default
    assert presenting.footer(done, shown.TOKENS) == f"{base} · 2,468 tokens (2,000 in, 468 out)"
    assert presenting.footer(done, shown.COST) == (
        f"{base} · 2,468 tokens (2,000 in, 468 out) · $0.0042")
    unpriced = _update(MessageStatus.SUCCESS, _spent(None, cached=600), model_id="fast")
    assert presenting.footer(unpriced, shown.COST) == (
        f"{base} · 1,234 tokens (1,000 in, 600 cached, 234 out)")  # no price: tokens only
    nothing = _update(MessageStatus.SUCCESS, fold([Done(final_text="x", seq=6, at=T0)], _state()))
    assert presenting.footer(nothing, shown.COST) == presenting.footer(nothing)
    assert presenting.closing_line(done, shown.TOKENS).endswith("· 2,468 tokens (2,000 in, 468 out)")


def test_the_closing_line_says_the_time_once() -> None:
    state = fold([Done(final_text="x", seq=6, at=T0 + timedelta(seconds=80))], _state())
    done = _update(MessageStatus.SUCCESS, state, model_id="fast")
    assert presenting.closing_line(done) == (
        "✅ Done in 1m 20s · 2 tool calls · 1/2 todos · model fast")
    stopped = _update(MessageStatus.STOPPED, state)
    assert presenting.closing_line(stopped) == "⏹ Stopped · 1m 20s · 2 tool calls · 1/2 todos"


def test_the_footer_names_the_model_the_bridge_answered_with_unless_one_was_chosen() -> None:
    """A conversation on the default model (no catalogue choice) still names its model, as the
    Bridge reported it at `done`; a name of any length or content is bounded and cleaned."""
    answered = fold([Done(final_text="x", model="gpt-4o-mini", seq=6, at=T0 + timedelta(seconds=80))],
                    _state())
    assert presenting.footer(_update(MessageStatus.SUCCESS, answered)) == (
        "1m 20s · 2 tool calls · 1/2 todos · model gpt-4o-mini")
    assert presenting.footer(_update(MessageStatus.SUCCESS, answered, model_id="fast")).endswith(
        "· model fast")
    odd = fold([Done(final_text="x", model="m\x00" + "x" * 10_000, seq=6, at=T0)], _state())
    assert odd.model is not None and len(odd.model) == 100 and "\x00" not in odd.model
    unknown = fold([Done(final_text="x", seq=6, at=T0)], _state())  # an older Bridge
    assert "model" not in presenting.footer(_update(MessageStatus.SUCCESS, unknown))


def test_an_approval_says_what_it_asks_and_who_decided_what() -> None:
    asked = PauseView(pause_id=1, clarify_id="apr-1", question="rm -rf /tmp/x", choices=(
        "once", "session", "always", "deny"), status=PauseStatus.UNANSWERED,
        kind=PauseKind.APPROVAL, tool="terminal", reason="delete in root path")
    assert approval_question(asked) == (
        "⚠️ `terminal` asks to run a command flagged as dangerous (delete in root path)")
    assert [APPROVAL_LABELS[c] for c in asked.choices] == [
        "Allow once", "Allow in this conversation", "Always allow", "Deny"]
    assert approval_outcome(asked) is None
    decided = replace(asked, status=PauseStatus.ANSWERED, answer="session", answered_by="U42")
    assert approval_outcome(decided) == "✅ Allowed in this conversation by U42"
    assert approval_outcome(replace(asked, status=PauseStatus.EXPIRED)).startswith("⌛ Expired")
