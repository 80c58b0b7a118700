"""The replayed thinking state of an assistant message as JSON."""

from __future__ import annotations

from typing import Literal

import msgspec

from core.conversation.vocabulary import (
    CurrentStatus,
    PendingApproval,
    PendingClarify,
    RunFailure,
    ThinkingState,
    ToolCall,
)

StatusSourceName = Literal["thinking_status", "step", "status", "tool_progress"]


class StatusOut(msgspec.Struct, frozen=True, rename="camel"):
    text: str
    source: StatusSourceName
    tool_name: str | None


class ToolCallOut(msgspec.Struct, frozen=True, rename="camel"):
    call_id: str
    name: str
    args_preview: str
    result_preview: str | None
    is_error: bool
    finished: bool


class TodoOut(msgspec.Struct, frozen=True, rename="camel"):
    id: str
    content: str
    status: Literal["pending", "in_progress", "completed", "cancelled"]


class ClarifyOut(msgspec.Struct, frozen=True, rename="camel"):
    clarify_id: str
    question: str
    choices: list[str]
    seq: int


class ApprovalPendingOut(msgspec.Struct, frozen=True, rename="camel"):
    """A tool call waiting for a decision (POST /api/chat/approvals/{approvalId}/decision)."""

    approval_id: str
    tool: str
    command: str
    reason: str
    choices: list[str]
    seq: int


class FailureOut(msgspec.Struct, frozen=True, rename="camel"):
    message: str
    code: str


class ThinkingOut(msgspec.Struct, frozen=True, rename="camel"):
    """Streamed thinking, current status, tools, todos, pending clarify or tool approval and how
    the run ended."""

    thinking: str
    status: StatusOut | None
    tools: list[ToolCallOut]
    todos: list[TodoOut]
    pending_clarify: ClarifyOut | None
    pending_approval: ApprovalPendingOut | None
    tool_calls: int
    iteration: int
    compactions: int
    elapsed_seconds: float
    final_text: str | None
    error: FailureOut | None
    last_seq: int


def thinking_out(state: ThinkingState) -> ThinkingOut:
    """The JSON shape of a replayed state."""
    return ThinkingOut(
        thinking=str(state.thinking), status=_status(state.status),
        tools=[_tool(t) for t in state.tools],
        todos=[TodoOut(t.id, t.content, t.status) for t in state.todos],
        pending_clarify=_clarify(state.pending_clarify),
        pending_approval=_approval(state.pending_approval), tool_calls=state.tool_calls,
        iteration=state.iteration, compactions=state.compactions,
        elapsed_seconds=state.elapsed.total_seconds(), final_text=state.final_text,
        error=_failure(state.error), last_seq=state.last_seq,
    )


def _status(status: CurrentStatus | None) -> StatusOut | None:
    if status is None:
        return None
    source: StatusSourceName = status.source.name.lower()  # type: ignore[assignment]
    return StatusOut(status.text, source, status.tool_name)


def _tool(tool: ToolCall) -> ToolCallOut:
    return ToolCallOut(
        tool.call_id, tool.name, tool.args_preview, tool.result_preview, tool.is_error,
        tool.finished,
    )


def _clarify(pending: PendingClarify | None) -> ClarifyOut | None:
    if pending is None:
        return None
    return ClarifyOut(pending.clarify_id, pending.question, list(pending.choices), pending.seq)


def _approval(pending: PendingApproval | None) -> ApprovalPendingOut | None:
    if pending is None:
        return None
    return ApprovalPendingOut(pending.approval_id, pending.tool, pending.command, pending.reason,
                              list(pending.choices), pending.seq)


def _failure(failure: RunFailure | None) -> FailureOut | None:
    return None if failure is None else FailureOut(failure.message, failure.code)
