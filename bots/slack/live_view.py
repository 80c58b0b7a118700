"""The live message of a run in flight (pure): status, tool, todos, recent tools, thinking tail."""

from __future__ import annotations

from core import presenting
from core.models import MessageStatus
from core.runtime.updates import RunUpdate

from . import ids
from .blocks import Block, Payload, actions, button, context, section
from .mrkdwn import escape

THINKING_TAIL = 600
RECENT_TOOLS = 5
BRANCHED = "↪️ Answering your edited message (a new branch of this conversation)"
WORKING = "💭 Working on it…"
WORKING_NOTE = "What it is doing shows under this thread; the answer comes here."


def render_live(update: RunUpdate, branched: bool = False) -> Payload:
    """What the bot message shows while the run is queued or running."""
    status = presenting.status_line(update)
    blocks: list[Block] = [context(BRANCHED)] if branched else []
    blocks.append(section(f"*{escape(status)}*"))
    blocks += _tool_and_todos(update)
    if len(update.state.thinking):
        tail = presenting.thinking_tail(update.state, THINKING_TAIL)
        blocks.append(context(f"💭 {escape(tail)}"))
    if not update.finished:
        blocks.append(stop_control(update.run_id))
    return Payload(status, blocks)


def render_placeholder(update: RunUpdate) -> Payload:
    """The live message of a turn that is not edited as it goes (the workspace's budget is
    spoken for): the thread's loading status shows the progress, this message the answer."""
    return Payload(WORKING, [section(f"*{WORKING}*"), context(WORKING_NOTE),
                             stop_control(update.run_id)])


def stop_control(run_id: str) -> Block:
    """Our Stop button for a run in flight (it works from any replica)."""
    return actions(button("Stop", ids.STOP, ids.run_value(run_id), "danger"))


def loading_line(update: RunUpdate) -> str:
    """What the thread's loading status says the agent does ("Running search…")."""
    state = update.state
    if state.pending_clarify is not None:
        return "Waiting for your answer"
    if state.current_tool is not None:
        return f"Running {state.current_tool.name}…"
    if update.status == MessageStatus.QUEUED:
        return "Waiting in line…"
    return state.status.text if state.status else "Thinking…"


def _tool_and_todos(update: RunUpdate) -> list[Block]:
    state = update.state
    blocks: list[Block] = []
    current = state.current_tool
    if current is not None:
        preview = f" `{escape(current.args_preview)}`" if current.args_preview else ""
        blocks.append(section(f"🔧 *{escape(current.name)}*{preview}"))
    if state.todos:
        lines = presenting.todo_lines(state.todos)
        blocks.append(section("*Todo*\n" + "\n".join(escape(line) for line in lines)))
    if state.tools:
        lines = presenting.recent_tools(state, RECENT_TOOLS)
        blocks.append(context("Tools: " + " · ".join(escape(line) for line in lines)))
    return blocks
