"""Platform-neutral words of a run's live view and footer; each adapter lays them out
(Block Kit, embeds) but says the same things the same way."""

from __future__ import annotations

from datetime import timedelta
from enum import StrEnum

from core.agent.events import Todo
from core.agent.thinking import ThinkingState, ToolCall, UsageTotals
from core.runtime.updates import PauseView, RunUpdate
from core.store.models import MessageStatus, PauseStatus
from core.usage import words

TODO_MARKS = {"completed": "☑", "in_progress": "▶", "pending": "☐", "cancelled": "✖"}
# The buttons of a tool approval, by decision (the order they are offered in).
APPROVAL_LABELS = {"once": "Allow once", "session": "Allow in this conversation",
                   "always": "Always allow", "deny": "Deny"}
_DECIDED = {"once": "✅ Allowed once", "session": "✅ Allowed in this conversation",
            "always": "✅ Always allowed", "deny": "⛔ Denied"}


def approval_question(pause: PauseView) -> str:
    """The first line of a tool approval (its command goes in a code block under it)."""
    reason = f" ({pause.reason})" if pause.reason else ""
    return f"⚠️ `{pause.tool or 'a tool'}` asks to run a command flagged as dangerous{reason}"


def approval_outcome(pause: PauseView) -> str | None:
    """Who decided what ("⛔ Denied by U42"), "⌛ Expired", or None while it waits."""
    if pause.status == PauseStatus.EXPIRED:
        return "⌛ Expired: nobody decided in time, so it did not run"
    if pause.status != PauseStatus.ANSWERED:
        return None
    said = _DECIDED.get(pause.answer or "", f"Answered {pause.answer}")
    return f"{said} by {pause.answered_by or 'someone'}"


def duration(elapsed: timedelta) -> str:
    """"42s", "3m 05s", "1h 02m"."""
    seconds = int(elapsed.total_seconds())
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m {seconds % 60:02d}s"
    return f"{seconds // 3600}h {seconds % 3600 // 60:02d}m"


def status_line(update: RunUpdate) -> str:
    """One line saying where the run stands (docs/thinking.md ②, plus queue and endings)."""
    state = update.state
    if update.status == MessageStatus.QUEUED:
        return f"⏳ Queued (#{update.position} in line)" if update.position else "⏳ Queued"
    if update.status == MessageStatus.SUCCESS:
        return f"✅ Done in {duration(state.elapsed)}"
    if update.status == MessageStatus.STOPPED:
        return "⏹ Stopped"
    if update.status == MessageStatus.FAILED:
        return f"⚠️ Failed: {update.error or 'unknown error'}"
    if state.pending_clarify is not None:
        return "❓ Waiting for your answer"
    if state.current_tool is not None:
        return f"🔧 Running {state.current_tool.name}"
    return f"💭 {state.status.text}" if state.status else "💭 Thinking…"


def todo_lines(todos: tuple[Todo, ...]) -> list[str]:
    """The checklist (area ④): one line per todo with its mark."""
    return [f"{TODO_MARKS.get(t.status, '☐')} {t.content}" for t in todos]


def tool_line(tool: ToolCall) -> str:
    """One entry of the tool history (area ③)."""
    if not tool.finished:
        return f"… {tool.name}"
    return f"✗ {tool.name} (error)" if tool.is_error else f"✓ {tool.name}"


def recent_tools(state: ThinkingState, count: int = 5) -> list[str]:
    """The last few tools, newest last; an ellipsis line says how many came before."""
    tools = state.tools[-count:]
    earlier = len(state.tools) - len(tools)
    lines = [tool_line(t) for t in tools]
    return ([f"… and {earlier} earlier"] if earlier else []) + lines


def todos_done(state: ThinkingState) -> str | None:
    """"2/3 todos" when the run kept a list."""
    if not state.todos:
        return None
    done = sum(1 for t in state.todos if t.status == "completed")
    return f"{done}/{len(state.todos)} todos"


class UsageShown(StrEnum):
    """SHOW_USAGE: what a finished answer's footer says of its model calls."""

    OFF = "off"
    TOKENS = "tokens"  # the tokens
    COST = "cost"  # the tokens, and the cost where the model has prices


def footer(update: RunUpdate, usage: UsageShown = UsageShown.OFF) -> str:
    """The finished answer's context line: elapsed, tool calls, todos, model, skill, and its
    tokens (and cost) as SHOW_USAGE says."""
    return " · ".join([duration(update.state.elapsed), *_footer_details(update, usage)])


def closing_line(update: RunUpdate, usage: UsageShown = UsageShown.OFF) -> str:
    """How a finished run ended, then its footer, in one line that says the time once:
    "✅ Done in 42s · 2 tool calls · model fast", "⏹ Stopped · 42s · 2 tool calls"."""
    if update.status == MessageStatus.SUCCESS:  # "Done in 42s" has said the time already
        return " · ".join([status_line(update), *_footer_details(update, usage)])
    return f"{status_line(update)} · {footer(update, usage)}"


def spent(usage: UsageTotals, shown: UsageShown) -> str | None:
    """"1,234 tokens (1,200 in, 34 out)", with " · $0.0042" when the cost is shown and known;
    None when nothing is shown (SHOW_USAGE off, or no call reported usage)."""
    if shown == UsageShown.OFF or usage.calls == 0:
        return None
    return words.spent(usage, cost=shown == UsageShown.COST)


def answered_by(update: RunUpdate) -> str | None:
    """The model a footer names: the one the conversation chose (its catalogue id), else the
    one the Bridge reported answering with (the catalogue's default or HERMES_MODEL)."""
    return update.model_id or update.state.model


def _footer_details(update: RunUpdate, usage: UsageShown) -> list[str]:
    state = update.state
    calls = state.tool_calls
    parts = [f"{calls} tool call{'s' if calls != 1 else ''}"]
    parts += [p for p in (todos_done(state),) if p]
    if model := answered_by(update):
        parts.append(f"model {model}")
    if update.skill_folder:
        parts.append(f"skill {update.skill_folder}")
    if words := spent(state.usage, usage):
        parts.append(words)
    return parts


def thinking_tail(state: ThinkingState, chars: int) -> str:
    """The end of the thinking stream, cut at a line start where one is near."""
    tail = state.thinking.tail(chars)
    if len(state.thinking) > chars and "\n" in tail[: chars // 4]:
        tail = tail.split("\n", 1)[1]
    return ("…" if len(state.thinking) > len(tail) else "") + tail
