"""hermes-agent's callbacks of one turn, translated into Bridge events.

They fire on the agent's thread (and its tool worker threads); everything goes through
the thread-safe RunEmitter.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from bridge.approval_gate import ApprovalQuestion
from bridge.checkpoints import ConversationTap, before_tool_calls
from bridge.clarify_board import ClarifyBoard, ClarifyTicket
from bridge.emitter import RunEmitter

RESULT_LIMIT = 500
PREVIEW_LIMIT = 500
UNCUT_TOOLS = frozenset({"todo"})


class AgentCallbacks:
    """Installed on the session's agent for one turn."""

    def __init__(self, emitter: RunEmitter, board: ClarifyBoard, run_id: str,
                 interrupt: Callable[[], None], tap: ConversationTap | None = None) -> None:
        self._emitter = emitter
        self._board = board
        self._run_id = run_id
        self._interrupt = interrupt
        self._tap = tap or ConversationTap()
        self._tool_errors: dict[str, bool] = {}
        self._clarify_calls: list[str] = []  # call ids of clarify tool calls not yet asked
        self._started: list[tuple[str, Any]] = []  # (tool name, args) of the calls started
        self.compressed = False
        self.clarify_expired = False

    def install(self, agent: Any) -> None:
        """Point the agent's callback attributes at this turn."""
        agent.stream_delta_callback = self.stream_delta
        agent.thinking_callback = self.thinking
        agent.step_callback = self.step
        agent.status_callback = self.status
        agent.tool_start_callback = self.tool_start
        agent.tool_complete_callback = self.tool_complete
        agent.tool_progress_callback = self.tool_progress
        agent.event_callback = self.event
        agent.clarify_callback = self.clarify

    def stream_delta(self, text: str | None) -> None:
        if text:  # None only marks the end of a streamed segment
            self._emitter.text(text)

    def thinking(self, content: str) -> None:
        if content:  # "" clears hermes' spinner; the next status overwrites anyway
            self._emitter.emit("thinking_status", {"content": content})

    def step(self, iteration: int, prev_tools: list[Any] | None = None) -> None:
        if iteration > 1:  # the previous step (a model reply and its tools' results) is done
            self._checkpoint(None)
        names = [t.get("name", "") if isinstance(t, dict) else str(t) for t in prev_tools or []]
        self._emitter.emit("step", {"iteration": iteration, "prev_tools": names})

    def status(self, category: str, message: str) -> None:
        self._emitter.emit("status", {"category": str(category), "message": str(message)})

    def tool_start(self, call_id: str, name: str, args: Any) -> None:
        if name == "clarify":
            self._clarify_calls.append(call_id)
        data = {"tool_call_id": call_id, "tool_name": name, "args": _as_object(args)}
        self._started = [*self._started[-15:], (name, data["args"])]
        self._emitter.emit("tool_start", data)

    def tool_complete(self, call_id: str, name: str, args: Any, result: Any) -> None:
        text = result if isinstance(result, str) else json.dumps(result, default=str)
        is_error = self._tool_errors.pop(name, None)
        if is_error is None:
            is_error = _looks_like_error(text)
        cut = text if name in UNCUT_TOOLS else text[:RESULT_LIMIT]
        data = {"tool_call_id": call_id, "tool_name": name, "result": cut, "is_error": is_error}
        self._emitter.emit("tool_end", data)
        if name == "todo":
            self._emit_todos(text)

    def tool_progress(self, event_name: str, tool_name: str | None = None,
                      preview: str | None = None, args: Any = None, **extra: Any) -> None:
        if event_name == "tool.completed" and tool_name and "is_error" in extra:
            self._tool_errors[tool_name] = bool(extra["is_error"])
        cut = None if preview is None else str(preview)[:PREVIEW_LIMIT]
        data = {"event_name": event_name, "tool_name": tool_name, "preview": cut}
        self._emitter.emit("tool_progress", data)

    def event(self, name: str, payload: dict[str, Any] | None = None) -> None:
        if name == "session:compress":
            self.compressed = True  # the summary is read from the turn's messages

    def clarify(self, question: str, choices: list[str] | None) -> str:
        """Blocks this (the agent's) thread until the answer, cancel or fallback expiry."""
        ticket = self._board.ask(self._run_id, question, list(choices or []), self._announce)
        if ticket.state == "expired":
            self.clarify_expired = True
            self._interrupt()
        return ticket.answer or ""

    def _announce(self, ticket: ClarifyTicket) -> None:
        call_id = self._clarify_calls.pop(0) if self._clarify_calls else None
        if call_id:  # stored before the question: an answer can always continue the turn
            self._checkpoint({"call_id": call_id, "clarify_id": ticket.clarify_id})
        data = {"clarify_id": ticket.clarify_id, "question": ticket.question,
                "choices": ticket.choices}
        self._emitter.emit("clarify_request", data)

    def tool_of(self, command: str) -> str:
        """Which started tool an approval question is about: the one whose command (or code)
        it shows, else the latest one."""
        for name, args in reversed(self._started):
            if command and command in (args.get("command"), args.get("code")):
                return name
        return self._started[-1][0] if self._started else "terminal"

    def approval(self, question: ApprovalQuestion, ticket: ClarifyTicket) -> None:
        """Announce an approval question; the checkpoint before it is the turn before the model
        call that asked for the tool, so another Bridge can ask that step again and apply the
        decision given meanwhile."""
        messages = self._tap.snapshot()
        if messages:
            self._emitter.emit("checkpoint", {
                "messages": before_tool_calls(messages), "clarify": None,
                "approval": {"approval_id": ticket.clarify_id}})
        self._emitter.emit("approval_request", question.event_data(ticket.clarify_id))

    def _checkpoint(self, clarify: dict[str, str] | None) -> None:
        messages = self._tap.snapshot()
        if messages:
            self._emitter.emit("checkpoint", {"messages": messages, "clarify": clarify})

    def _emit_todos(self, text: str) -> None:
        try:
            parsed = json.loads(text)
        except ValueError:
            return
        if isinstance(parsed, dict) and isinstance(parsed.get("todos"), list):
            todos = {"todos": parsed["todos"], "summary": parsed.get("summary") or {}}
            self._emitter.emit("todo_update", todos)


def _as_object(args: Any) -> dict[str, Any]:
    if isinstance(args, dict):
        return args
    if isinstance(args, str):
        try:
            parsed = json.loads(args)
        except ValueError:
            return {"raw": args}
        return parsed if isinstance(parsed, dict) else {"value": parsed}
    return {} if args is None else {"value": args}


def _looks_like_error(text: str) -> bool:
    try:
        parsed = json.loads(text)
    except ValueError:
        return False
    return isinstance(parsed, dict) and bool(parsed.get("error"))
