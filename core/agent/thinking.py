"""The five thinking areas (docs/thinking.md) as one immutable state and one pure reducer.

① streaming thinking (append) ② current status (one overwritten slot, by priority)
③ current tool + tool history ④ todos (last full list) ⑤ pending clarify.
`reduce` folds live events; `replay` folds stored log rows through the same function.

Status priority: tool_progress > status > step > thinking_status. An event may write the slot
when the slot is empty or holds an event of the same or lower priority (newest wins on ties).
The slot is reset, so lower priorities may write again, when
- a `step` arrives: a new iteration makes everything before it stale, so `step` always writes;
- the tool whose progress the slot shows ends (`tool_end` with that tool name, or any
  `tool_end` when the progress named no tool): the slot becomes empty;
- the run ends (`done` / `error`): the slot becomes empty.

Beside the areas, the state sums the run's `usage` events (the footer's tokens and cost).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import IntEnum
from typing import Any

import msgspec

from core.errors import InvalidInput
from core.agent.events import (
    ApprovalRequest, ClarifyRequest, ContextCompacted, Done, Event, LogRecord, RunError, Status,
    Step,
    TextDelta, ThinkingStatus, Todo, TodoUpdate, ToolEnd, ToolProgress, ToolStart, Usage,
    event_from_log,
)
from core.text.safe_text import bounded
from core.agent.thinking_text import ThinkingText

logger = logging.getLogger(__name__)

ARGS_PREVIEW_CHARS = 200
RESULT_PREVIEW_CHARS = 500


class StatusSource(IntEnum):
    """Where the current status came from; the value is its priority."""

    THINKING_STATUS = 0
    STEP = 1
    STATUS = 2
    TOOL_PROGRESS = 3


@dataclass(frozen=True, slots=True)
class CurrentStatus:
    """Area ②: one line saying what the agent does now."""

    text: str
    source: StatusSource
    tool_name: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCall:
    """Area ③: one tool call, running (`finished` False) or done."""

    call_id: str
    name: str
    args_preview: str
    result_preview: str | None = None
    is_error: bool = False
    finished: bool = False


@dataclass(frozen=True, slots=True)
class PendingClarify:
    """Area ⑤: a question the agent waits on."""

    clarify_id: str
    question: str
    choices: tuple[str, ...]
    seq: int


COMMAND_LIMIT = 3000  # of an approval's command, as stored and shown (a code block fits it)
REASON_LIMIT = 500
TOOL_LIMIT = 128
MODEL_LIMIT = 100  # of the model name a `done` reports, as shown in the footer


@dataclass(frozen=True, slots=True)
class PendingApproval:
    """Area ⑤ too: a tool call the agent waits to be allowed (its texts cut where they enter)."""

    approval_id: str
    tool: str
    command: str
    reason: str
    choices: tuple[str, ...]
    seq: int


@dataclass(frozen=True, slots=True)
class RunFailure:
    """How a run ended in `error` (code: aborted, llm_error, internal, clarify_expired)."""

    message: str
    code: str


@dataclass(frozen=True, slots=True)
class UsageTotals:
    """What model calls spent: their tokens as reported, and their cost (None: no call was
    priced; a run whose model has prices has every call priced)."""

    calls: int = 0
    prompt_tokens: int = 0  # the cached ones included
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost: float | None = None

    @property
    def tokens(self) -> int:
        """Prompt and completion tokens: what a token limit counts."""
        return self.prompt_tokens + self.completion_tokens

    def plus(self, call: Usage) -> UsageTotals:
        """These totals and one more call."""
        cost = self.cost if call.cost is None else (self.cost or 0.0) + call.cost
        return UsageTotals(self.calls + 1, self.prompt_tokens + call.prompt_tokens,
                           self.completion_tokens + call.completion_tokens,
                           self.cached_tokens + call.cached_tokens, cost)


@dataclass(frozen=True, slots=True)
class ThinkingState:
    """Everything a renderer shows of one run; build new ones with `reduce`."""

    thinking: ThinkingText = field(default_factory=ThinkingText)
    status: CurrentStatus | None = None
    tools: tuple[ToolCall, ...] = ()
    todos: tuple[Todo, ...] = ()
    pending_clarify: PendingClarify | None = None
    pending_approval: PendingApproval | None = None
    iteration: int = 0
    compactions: int = 0
    final_text: str | None = None
    model: str | None = None  # the model that answered, as the Bridge reported it at `done`
    error: RunFailure | None = None
    usage: UsageTotals = UsageTotals()  # the run's model calls so far
    last_seq: int = 0
    first_at: datetime | None = None
    last_at: datetime | None = None

    @property
    def terminal(self) -> bool:
        """True once `done` or `error` was folded."""
        return self.final_text is not None or self.error is not None

    @property
    def current_tool(self) -> ToolCall | None:
        """The most recently started tool that has not ended."""
        return next((t for t in reversed(self.tools) if not t.finished), None)

    @property
    def tool_calls(self) -> int:
        """How many tool calls the run made so far."""
        return len(self.tools)

    @property
    def elapsed(self) -> timedelta:
        """Time from the first to the last event folded."""
        if self.first_at is None or self.last_at is None:
            return timedelta(0)
        return self.last_at - self.first_at


def reduce(state: ThinkingState, event: Event) -> ThinkingState:
    """Fold one event into the state; already-folded seqs and events after the end are ignored."""
    if event.seq <= state.last_seq or state.terminal:
        return state
    if isinstance(event, TextDelta):  # the hot path: one copy instead of two
        return replace(state, thinking=state.thinking.append(event.text), **_stamp_fields(state, event))
    return _apply(_stamp(state, event), event)


def fold(events: Iterable[Event], state: ThinkingState | None = None) -> ThinkingState:
    """Fold events in order, from `state` or an empty state: the same as `reduce` on each,
    but a run of text deltas (most of a stream) is folded with one append and one copy."""
    result = state or ThinkingState()
    texts: list[TextDelta] = []
    for event in events:
        if isinstance(event, TextDelta):
            texts.append(event)
            continue
        if texts:
            result = _fold_texts(result, texts)
            texts = []
        result = reduce(result, event)
    return _fold_texts(result, texts) if texts else result


def _fold_texts(state: ThinkingState, deltas: list[TextDelta]) -> ThinkingState:
    """`reduce` over consecutive text deltas at once (none of them ends the run)."""
    if state.terminal:
        return state
    last = state.last_seq
    kept: list[TextDelta] = []
    for delta in deltas:
        if delta.seq > last:
            kept.append(delta)
            last = delta.seq
    if not kept:
        return state
    text = "".join(delta.text for delta in kept)
    return replace(state, thinking=state.thinking.append(text), last_seq=last,
                   first_at=state.first_at or kept[0].at, last_at=kept[-1].at,
                   pending_clarify=None, pending_approval=None)


def replay(records: Iterable[LogRecord]) -> ThinkingState:
    """Rebuild a run's state from its stored log rows; unreadable rows are logged and skipped."""
    state = ThinkingState()
    for record in sorted(records, key=lambda r: r.seq):
        try:
            event = event_from_log(record)
        except InvalidInput as exc:
            logger.warning("replay skips a stored log row: %s", exc)
            continue
        state = reduce(state, event)
    return state


def answered(state: ThinkingState, clarify_id: str) -> ThinkingState:
    """The state once the user answered `clarify_id`, a clarify or an approval (unchanged if
    another one is pending)."""
    if state.pending_clarify is not None and state.pending_clarify.clarify_id == clarify_id:
        return replace(state, pending_clarify=None)
    if state.pending_approval is not None and state.pending_approval.approval_id == clarify_id:
        return replace(state, pending_approval=None)
    return state


def _stamp(state: ThinkingState, event: Event) -> ThinkingState:
    return replace(state, **_stamp_fields(state, event))


def _stamp_fields(state: ThinkingState, event: Event) -> dict[str, Any]:
    # Any event but ambient ones (spinner text, tool progress, which may tick while the agent
    # is blocked on the question; a call's usage) shows the run moved past a pending clarify.
    moved_on = not isinstance(event, (ThinkingStatus, ToolProgress, Usage))
    return {
        "last_seq": event.seq,
        "first_at": state.first_at or event.at,
        "last_at": event.at,
        "pending_clarify": None if moved_on else state.pending_clarify,
        "pending_approval": None if moved_on else state.pending_approval,
    }


def _apply(state: ThinkingState, event: Event) -> ThinkingState:
    match event:
        case TextDelta(text=text):
            return replace(state, thinking=state.thinking.append(text))
        case ThinkingStatus(content=content):
            return _offer(state, CurrentStatus(content, StatusSource.THINKING_STATUS))
        case Step():
            return _step(state, event)
        case Status(message=message):
            return _offer(state, CurrentStatus(message, StatusSource.STATUS))
        case ToolProgress():
            text = event.preview or event.event_name
            return _offer(state, CurrentStatus(text, StatusSource.TOOL_PROGRESS, event.tool_name))
        case ToolStart():
            return replace(state, tools=(*state.tools, _started(event)))
        case ToolEnd():
            return _tool_end(state, event)
        case TodoUpdate(todos=todos):
            return replace(state, todos=todos)
        case ClarifyRequest():
            pending = PendingClarify(event.clarify_id, event.question, event.choices, event.seq)
            return replace(state, pending_clarify=pending)
        case ApprovalRequest():
            return replace(state, pending_approval=_approval(event))
        case ContextCompacted():
            return replace(state, compactions=state.compactions + 1)
        case Usage():
            return replace(state, usage=state.usage.plus(event))
        case Done(final_text=final_text, model=model):
            return replace(state, final_text=final_text, status=None,
                           model=bounded(model, MODEL_LIMIT) if model else None)
        case RunError(message=message, code=code):
            return replace(state, error=RunFailure(message, code), status=None)
    return state


def _approval(event: ApprovalRequest) -> PendingApproval:
    return PendingApproval(event.approval_id, bounded(event.tool, TOOL_LIMIT),
                           bounded(event.command, COMMAND_LIMIT),
                           bounded(event.reason, REASON_LIMIT), event.choices, event.seq)


def _offer(state: ThinkingState, candidate: CurrentStatus) -> ThinkingState:
    current = state.status
    if current is None or candidate.source >= current.source:
        return replace(state, status=candidate)
    return state


def _step(state: ThinkingState, event: Step) -> ThinkingState:
    # Model output of successive iterations would run together; a paragraph break keeps
    # the stream readable without dropping anything.
    thinking = state.thinking
    if len(thinking) and thinking.tail(1) != "\n":
        thinking = thinking.append("\n\n")
    status = CurrentStatus(f"Step {event.iteration}", StatusSource.STEP)
    return replace(state, thinking=thinking, status=status, iteration=event.iteration)


def _started(event: ToolStart) -> ToolCall:
    args = msgspec.json.encode(event.args).decode()
    return ToolCall(event.tool_call_id, event.tool_name, _cut(args, ARGS_PREVIEW_CHARS))


def _tool_end(state: ThinkingState, event: ToolEnd) -> ThinkingState:
    done = ToolCall(
        event.tool_call_id, event.tool_name, "", _cut(event.result, RESULT_PREVIEW_CHARS),
        event.is_error, finished=True,
    )
    tools = list(state.tools)
    index = next(
        (i for i in reversed(range(len(tools)))
         if tools[i].call_id == event.tool_call_id and not tools[i].finished),
        None,
    )
    if index is None:
        tools.append(done)  # its start was lost; keep the result anyway
    else:
        tools[index] = replace(done, args_preview=tools[index].args_preview)
    return replace(state, tools=tuple(tools), status=_released(state.status, event.tool_name))


def _released(status: CurrentStatus | None, tool_name: str) -> CurrentStatus | None:
    if status is None or status.source is not StatusSource.TOOL_PROGRESS:
        return status
    return None if status.tool_name in (None, tool_name) else status


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
