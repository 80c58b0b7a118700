"""The thinking reducer: each of the five areas, the status priority, counters and replay."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.agent.events import (
    ApprovalRequest, ClarifyRequest, ContextCompacted, Done, Event, LogRecord, RunError, Status, Step,
    TextDelta, ThinkingStatus, Todo, TodoUpdate, ToolEnd, ToolProgress, ToolStart, Usage,
    event_to_log,
)
from core.agent.thinking import (
    ARGS_PREVIEW_CHARS, COMMAND_LIMIT, RESULT_PREVIEW_CHARS, CurrentStatus, StatusSource, ThinkingState,
    ThinkingText, UsageTotals, answered, fold, reduce, replay,
)

T0 = datetime(2026, 8, 2, 9, 0, tzinfo=UTC)
S = StatusSource


# --- builders (seq and at are set by `run`) --------------------------------------------

def text(t: str) -> Event:
    return TextDelta(seq=1, at=T0, text=t)


def spin(t: str) -> Event:
    return ThinkingStatus(seq=1, at=T0, content=t)


def step(n: int) -> Event:
    return Step(seq=1, at=T0, iteration=n)


def status(message: str) -> Event:
    return Status(seq=1, at=T0, category="lifecycle", message=message)


def progress(preview: str | None, tool: str | None = "web") -> Event:
    return ToolProgress(seq=1, at=T0, event_name="tool.progress", tool_name=tool, preview=preview)


def start(call: str, tool: str = "web", **args: object) -> Event:
    return ToolStart(seq=1, at=T0, tool_call_id=call, tool_name=tool, args=dict(args))


def end(call: str, tool: str = "web", result: str = "ok", is_error: bool = False) -> Event:
    return ToolEnd(seq=1, at=T0, tool_call_id=call, tool_name=tool, result=result, is_error=is_error)


def todos(*items: tuple[str, str]) -> Event:
    listed = tuple(Todo(str(i), content, state) for i, (content, state) in enumerate(items))
    return TodoUpdate(seq=1, at=T0, todos=listed)  # type: ignore[arg-type]


def clarify(cid: str, *choices: str) -> Event:
    return ClarifyRequest(seq=1, at=T0, clarify_id=cid, question=f"{cid}?", choices=choices)


def usage(prompt: int = 100, completion: int = 10, cached: int = 0,
          cost: float | None = None) -> Event:
    return Usage(seq=1, at=T0, model="m", prompt_tokens=prompt, completion_tokens=completion,
                 cached_tokens=cached, cost=cost)


def done(final: str = "answer") -> Event:
    return Done(seq=1, at=T0, final_text=final)


def failed(code: str = "llm_error") -> Event:
    return RunError(seq=1, at=T0, message="it broke", code=code)


def numbered(events: list[Event]) -> list[Event]:
    return [
        msgspec.structs.replace(e, seq=i, at=T0 + timedelta(seconds=i - 1))
        for i, e in enumerate(events, start=1)
    ]


def run(*events: Event) -> ThinkingState:
    return fold(numbered(list(events)))


# --- ① streaming thinking --------------------------------------------------------------

def test_text_deltas_append_and_steps_add_a_paragraph_break() -> None:
    state = run(text("Let me "), text("look."), step(2), text("Found it."))
    assert str(state.thinking) == "Let me look.\n\nFound it."
    assert state.thinking.tail(9) == "Found it." and len(state.thinking) == 23


def test_thinking_text_is_shared_not_copied_and_compares_by_content() -> None:
    a = ThinkingText().append("ab").append("").append("c")
    b = ThinkingText().append("a").append("bc")
    assert a == b and hash(a) == hash(b) and repr(a) == "ThinkingText('abc')"
    assert a.tail(0) == "" and a.tail(10) == "abc"


def test_a_long_stream_stays_complete_without_recursion() -> None:
    state = fold(numbered([text("x") for _ in range(20_000)]))
    assert len(state.thinking) == 20_000 and state.thinking.tail(3) == "xxx"
    assert state == fold(numbered([text("x") for _ in range(20_000)]))


# --- ② current status and its priority ---------------------------------------------------

PRIORITY = [
    ("spinner alone", [spin("hmm")], ("hmm", S.THINKING_STATUS)),
    ("status beats spinner", [status("compressing"), spin("hmm")], ("compressing", S.STATUS)),
    ("status replaces spinner", [spin("hmm"), status("retrying")], ("retrying", S.STATUS)),
    ("step beats spinner", [step(1), spin("hmm")], ("Step 1", S.STEP)),
    ("status beats step", [step(1), status("retrying")], ("retrying", S.STATUS)),
    ("progress beats status", [progress("searching"), status("retrying")], ("searching", S.TOOL_PROGRESS)),
    ("newest wins on a tie", [status("a"), status("b")], ("b", S.STATUS)),
    ("progress tie", [progress("p1"), progress("p2")], ("p2", S.TOOL_PROGRESS)),
    ("progress without preview shows its name", [progress(None)], ("tool.progress", S.TOOL_PROGRESS)),
    ("a new step resets the slot", [progress("p"), status("s"), step(2)], ("Step 2", S.STEP)),
    ("after the reset lower ones compete again", [progress("p"), step(2), status("s")], ("s", S.STATUS)),
    ("the progressing tool ends: slot empty", [start("c1"), progress("p"), end("c1")], None),
    ("then even the spinner writes", [start("c1"), progress("p"), end("c1"), spin("hmm")],
     ("hmm", S.THINKING_STATUS)),
    ("another tool ending keeps the progress",
     [start("c1"), start("c2", "read"), progress("p"), end("c2", "read")], ("p", S.TOOL_PROGRESS)),
    ("progress naming no tool ends with any tool", [progress("p", tool=None), end("c9", "read")], None),
    ("tool end keeps a plain status", [status("s"), end("c1")], ("s", S.STATUS)),
    ("done clears it", [status("s"), done()], None),
    ("error clears it", [progress("p"), failed()], None),
]


@pytest.mark.parametrize(("case", "events", "expected"), PRIORITY, ids=[p[0] for p in PRIORITY])
def test_status_priority(case: str, events: list[Event], expected: tuple[str, StatusSource] | None) -> None:
    state = run(*events)
    if expected is None:
        assert state.status is None
    else:
        assert state.status is not None
        assert (state.status.text, state.status.source) == expected


def test_progress_keeps_its_tool_name() -> None:
    assert run(progress("p", tool="web")).status == CurrentStatus("p", S.TOOL_PROGRESS, "web")


# --- ③ current tool and history -------------------------------------------------------

def test_current_tool_and_history_in_start_order() -> None:
    state = run(start("c1", "web", q="cats"), start("c2", "read", path="/a"))
    assert state.current_tool is not None and state.current_tool.call_id == "c2"
    state = reduce(state, numbered([text("")] * 3 + [end("c2", "read", "text of a")])[-1])
    assert state.current_tool is not None and state.current_tool.call_id == "c1"
    assert [(t.call_id, t.finished) for t in state.tools] == [("c1", False), ("c2", True)]
    assert state.tools[1].args_preview == '{"path":"/a"}'
    assert state.tools[1].result_preview == "text of a"


def test_tool_errors_previews_and_orphans() -> None:
    state = run(
        start("c1", q="x" * 1000), end("c1", result="y" * 1000, is_error=True),
        end("lost", "read", "orphan"),
    )
    first, orphan = state.tools
    assert first.is_error and first.finished
    assert len(first.args_preview) == ARGS_PREVIEW_CHARS and first.args_preview.endswith("…")
    assert len(first.result_preview or "") == RESULT_PREVIEW_CHARS
    assert (orphan.call_id, orphan.name, orphan.result_preview, orphan.finished) == (
        "lost", "read", "orphan", True)
    assert state.current_tool is None and state.tool_calls == 2


def test_the_same_call_id_reused_later_updates_the_running_one() -> None:
    state = run(start("c1"), end("c1", result="one"), start("c1"), end("c1", result="two"))
    assert [t.result_preview for t in state.tools] == ["one", "two"]


# --- ④ todos ------------------------------------------------------------------------------

def test_todos_are_the_last_full_list() -> None:
    state = run(todos(("read", "in_progress"), ("write", "pending")),
                todos(("read", "completed"), ("write", "in_progress")))
    assert [(t.content, t.status) for t in state.todos] == [
        ("read", "completed"), ("write", "in_progress")]
    assert run(todos(("a", "pending")), todos()).todos == ()


# --- ⑤ pending clarify -------------------------------------------------------------------

CLARIFY = [
    ("set by the request", [clarify("k1", "a", "b")], "k1"),
    ("a newer request replaces it", [clarify("k1"), clarify("k2")], "k2"),
    ("spinner does not clear it", [clarify("k1"), spin("waiting")], "k1"),
    ("tool progress does not clear it", [clarify("k1"), progress("p")], "k1"),
    ("the clarify tool ending clears it", [start("c", "clarify"), clarify("k1"), end("c", "clarify")], None),
    ("new text clears it", [clarify("k1"), text("ok")], None),
    ("a new step clears it", [clarify("k1"), step(3)], None),
    ("the end clears it", [clarify("k1"), failed("clarify_expired")], None),
]


@pytest.mark.parametrize(("case", "events", "pending"), CLARIFY, ids=[c[0] for c in CLARIFY])
def test_pending_clarify(case: str, events: list[Event], pending: str | None) -> None:
    state = run(*events)
    assert (state.pending_clarify.clarify_id if state.pending_clarify else None) == pending


def test_pending_clarify_carries_the_question() -> None:
    pending = run(text("hm"), clarify("k1", "yes", "no")).pending_clarify
    assert pending is not None
    assert (pending.question, pending.choices, pending.seq) == ("k1?", ("yes", "no"), 2)


def test_answered_clears_only_the_named_clarify() -> None:
    state = run(clarify("k1"))
    assert answered(state, "other") is state
    assert answered(state, "k1").pending_clarify is None
    assert answered(ThinkingState(), "k1") == ThinkingState()


def approval(aid: str, command: str = "rm -rf /tmp/x") -> Event:
    return ApprovalRequest(seq=1, at=T0, approval_id=aid, command=command, tool="terminal",
                           reason="delete in root path", pattern_key="delete in root path",
                           choices=("once", "session", "always", "deny"))


def test_a_pending_approval_shows_its_command_until_the_run_moves_on() -> None:
    state = run(start("c1", "terminal"), approval("a1"), spin("waiting"))
    pending = state.pending_approval
    assert pending is not None and pending.seq == 2
    assert (pending.tool, pending.command, pending.reason) == (
        "terminal", "rm -rf /tmp/x", "delete in root path")
    assert pending.choices == ("once", "session", "always", "deny")
    assert run(approval("a1"), end("c1", "terminal")).pending_approval is None
    assert answered(state, "a1").pending_approval is None
    assert answered(state, "other") is state


def test_an_approvals_command_is_cut_and_cleaned_where_it_enters() -> None:
    pending = run(approval("a1", "echo \x00" + "y" * 10_000)).pending_approval
    assert pending is not None and len(pending.command) == COMMAND_LIMIT
    assert "\x00" not in pending.command and pending.command.endswith("…")


# --- counters, end, idempotence ------------------------------------------------------------

def test_counters_and_elapsed() -> None:
    state = run(step(1), start("a"), end("a"), start("b"), end("b"), done("fin"))
    assert state.tool_calls == 2 and state.iteration == 1
    assert state.elapsed == timedelta(seconds=5) and state.last_seq == 6
    assert ThinkingState().elapsed == timedelta(0)
    ctx = ContextCompacted(seq=1, at=T0, summary="s", compacted_until=4)
    assert run(ctx, ctx).compactions == 2


def test_usage_sums_each_call_and_a_cost_only_where_priced() -> None:
    state = run(step(1), usage(), step(2), usage(250, 7, 200), done())
    assert state.usage == UsageTotals(calls=2, prompt_tokens=350, completion_tokens=17,
                                      cached_tokens=200)
    assert state.usage.tokens == 367 and state.usage.cost is None
    priced = run(usage(cost=0.25), usage(cost=None), usage(cost=0.5))
    assert priced.usage.calls == 3 and priced.usage.cost == 0.75


def test_a_calls_usage_does_not_move_past_a_pending_question() -> None:
    assert run(clarify("k1", "a"), usage()).pending_clarify is not None


def test_done_and_error_are_terminal_and_later_events_are_ignored() -> None:
    finished = run(text("a"), done("the answer"), text("late"))
    assert finished.terminal and finished.final_text == "the answer"
    assert str(finished.thinking) == "a" and finished.last_seq == 2
    broken = run(failed("aborted"))
    assert broken.terminal and broken.error is not None and broken.error.code == "aborted"
    assert not ThinkingState().terminal


def test_already_folded_seqs_are_ignored() -> None:
    events = numbered([text("a"), text("b")])
    state = fold(events)
    assert fold(events, state) is state
    assert reduce(state, events[0]) is state


# --- replay ----------------------------------------------------------------------------

def test_replay_skips_unreadable_rows_and_sorts_by_seq(caplog: pytest.LogCaptureFixture) -> None:
    events = numbered([text("a"), status("s"), text("b"), done()])
    rows = [event_to_log(e) for e in events]
    rows.insert(1, LogRecord(seq=99, kind="mystery", created_at=T0))
    assert replay(reversed(rows)) == fold(events)
    assert "mystery" in caplog.text


ids_ = st.sampled_from(["c1", "c2", "c3"])
tools_ = st.sampled_from(["web", "read", "clarify"])
words = st.text(max_size=6)
EVENTS = st.one_of(
    st.builds(text, words),
    st.builds(spin, words),
    st.builds(step, st.integers(0, 9)),
    st.builds(status, words),
    st.builds(progress, st.none() | words, st.none() | tools_),
    st.builds(lambda c, t, v: start(c, t, v=v), ids_, tools_, words),
    st.builds(end, ids_, tools_, words, st.booleans()),
    st.builds(lambda a, b: todos(("x", a), ("y", b)), *[st.sampled_from(
        ["pending", "in_progress", "completed", "cancelled"])] * 2),
    st.builds(clarify, st.sampled_from(["k1", "k2"]), words),
    st.builds(lambda s, n: ContextCompacted(seq=1, at=T0, summary=s, compacted_until=n),
              words, st.none() | st.integers(0, 50)),
    st.builds(usage, st.integers(0, 999), st.integers(0, 99), st.integers(0, 99),
              st.none() | st.floats(0, 1)),
    st.builds(done, words),
    st.builds(failed, st.sampled_from(["aborted", "llm_error", "internal", "clarify_expired"])),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(EVENTS, max_size=40))
def test_replay_of_stored_rows_equals_the_live_state(events: list[Event]) -> None:
    live = fold(numbered(events))
    assert replay([event_to_log(e) for e in numbered(events)]) == live


@settings(max_examples=100, deadline=None)
@given(st.lists(EVENTS, min_size=1, max_size=30), st.lists(st.tuples(st.integers(0), st.integers(0))))
def test_redelivered_events_change_nothing(events: list[Event], repeats: list[tuple[int, int]]) -> None:
    once = numbered(events)
    resend: dict[int, list[Event]] = {}
    for after, which in repeats:  # after event #after, event #which (<= after) comes again
        after %= len(once)
        resend.setdefault(after, []).append(once[which % (after + 1)])
    again = [e for i, first in enumerate(once) for e in (first, *resend.get(i, []))]
    assert fold(again) == fold(once)


def one_by_one(events: list[Event], state: ThinkingState | None = None) -> ThinkingState:
    result = state or ThinkingState()
    for event in events:
        result = reduce(result, event)
    return result


TEXT_HEAVY = st.one_of(st.builds(text, words), st.builds(text, words), EVENTS)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(TEXT_HEAVY, st.integers(1, 60), st.integers(0, 9)), max_size=50),
       st.integers(0, 50))
def test_folding_a_batch_equals_reducing_each_event(
    drawn: list[tuple[Event, int, int]], split: int
) -> None:
    """The live run folds whatever arrived in one go (runs of deltas at once); that must be
    exactly `reduce` on each event, whatever the seqs (repeats, gaps, going back)."""
    events = [msgspec.structs.replace(e, seq=seq, at=T0 + timedelta(seconds=s))
              for e, seq, s in drawn]
    expected = one_by_one(events)
    assert fold(events) == expected
    assert fold(events[split:], fold(events[:split])) == expected  # batch boundaries anywhere
    assert str(fold(events).thinking) == str(expected.thinking)
