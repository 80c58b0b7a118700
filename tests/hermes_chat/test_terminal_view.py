"""The terminal's view of a run (pure): each line once, the model's last words only as the answer."""

from __future__ import annotations

import io
from datetime import UTC, datetime

from core.agent.events import Done, Step, ToolProgress, ToolStart
from core.agent.thinking import ThinkingState, fold
from core.runtime.updates import RunUpdate
from core.store.models import MessageStatus
from hermes_chat.terminal_view import MODEL_TEXT, TerminalView

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_the_view_prints_only_what_changed() -> None:
    out = io.StringIO()
    view = TerminalView(out)
    update = RunUpdate("r", 1, 1, 2, MessageStatus.RUNNING, ThinkingState())
    view.show(update)
    view.show(update)
    assert out.getvalue().count("Thinking") == 1


def _model_says(text: str, seq: int) -> ToolProgress:
    """hermes-agent's relay of a reply of the model (the Bridge passes it on as it comes)."""
    return ToolProgress(event_name="reasoning.available", tool_name=MODEL_TEXT, preview=text,
                        seq=seq, at=T0)


def test_the_model_s_words_show_as_thinking_only_when_the_run_goes_on() -> None:
    out = io.StringIO()
    view = TerminalView(out)
    events = [Step(iteration=1, seq=1, at=T0), _model_says("Let me look it up.", 2),
              ToolStart(tool_call_id="a", tool_name="web", args={}, seq=3, at=T0),
              _model_says("It is sunny.", 4)]
    state = ThinkingState()
    for event in events:
        state = fold([event], state)
        view.show(RunUpdate("r", 1, 1, 2, MessageStatus.RUNNING, state))
    done = fold([Done(final_text="It is sunny.", seq=5, at=T0)], state)
    view.finish(RunUpdate("r", 1, 1, 2, MessageStatus.SUCCESS, done))
    text = out.getvalue()
    assert "💭 Let me look it up." in text  # the run went on: it was thinking
    assert text.count("It is sunny.") == 1 and "hermes> It is sunny." in text, text
