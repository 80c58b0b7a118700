"""A run in flight as stream chunks (pure): each tool call and each todo a `task_update`,
the todo list's progress a `plan_update`, the turn itself one task that ends complete or in
error. `ChunkDiff` remembers what the stream already shows, so each append carries only what
changed and a burst of events costs one call."""

from __future__ import annotations

from core import presenting
from core.models import MessageStatus
from core.runtime.updates import RunUpdate
from core.thinking import ToolCall

from .blocks import Block, clip

TITLE = 200
DETAILS = 500
THINKING_TAIL = 300
TURN = "turn"
TODO_STATUS = {"completed": "complete", "in_progress": "in_progress", "pending": "pending",
               "cancelled": "error"}


def run_chunks(update: RunUpdate) -> list[Block]:
    """Everything the stream should show of `update` now, in a stable order."""
    state = update.state
    chunks = [_turn(update)]
    chunks += [_tool(index, tool) for index, tool in enumerate(state.tools)]
    if state.todos:
        chunks.append({"type": "plan_update", "title": f"Plan: {presenting.todos_done(state)}"})
        chunks += [_task(f"todo-{todo.id}", todo.content, TODO_STATUS.get(todo.status, "pending"))
                   for todo in state.todos]
    return chunks


def _turn(update: RunUpdate) -> Block:
    """The turn as a task: its status line, with the tail of what the model writes."""
    line = presenting.status_line(update)
    if not update.finished:
        chunk = _task(TURN, line, "in_progress")
        if len(update.state.thinking):
            chunk["details"] = presenting.thinking_tail(update.state, THINKING_TAIL)
        return chunk
    return _task(TURN, line, "complete" if update.status == MessageStatus.SUCCESS else "error")


def _tool(index: int, tool: ToolCall) -> Block:
    status = "in_progress" if not tool.finished else "error" if tool.is_error else "complete"
    chunk = _task(f"tool-{index}", tool.name, status)
    if tool.args_preview:
        chunk["details"] = clip(tool.args_preview, DETAILS)
    if tool.result_preview:
        chunk["output"] = clip(tool.result_preview, DETAILS)
    return chunk


def _task(task_id: str, title: str, status: str) -> Block:
    return {"type": "task_update", "id": task_id, "title": clip(title, TITLE) or "…",
            "status": status}


class ChunkDiff:
    """What the stream shows, by chunk id (the plan's title under "plan")."""

    def __init__(self) -> None:
        self._shown: dict[str, Block] = {}

    def changed(self, update: RunUpdate) -> list[Block]:
        """The chunks of `update` the stream does not show yet, now counted as shown."""
        fresh = []
        for chunk in run_chunks(update):
            key = str(chunk.get("id", chunk["type"]))
            if self._shown.get(key) != chunk:
                self._shown[key] = chunk
                fresh.append(chunk)
        return fresh
