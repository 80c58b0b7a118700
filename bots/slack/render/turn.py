"""The live message of a run in flight (pure): status, tool, todos, recent tools, thinking tail.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.conversation import presenting
from core.conversation.presenting import UsageShown
from core.conversation.views import Versions
from core.conversation.vocabulary import MessageStatus, RunUpdate, ToolCall
from core.text.splitting import split_markdown

from .. import ids
from .blocks import (
    MAX_MARKDOWN,
    MAX_TEXT,
    Block,
    Payload,
    actions,
    button,
    clip,
    context,
    divider,
    feedback_buttons,
    markdown,
    section,
)
from .mrkdwn import escape, to_mrkdwn

THINKING_TAIL = 600
RECENT_TOOLS = 5
BRANCHED = "↪️ Answering your edited message (a new branch of this conversation)"
WORKING = "💭 Working on it…"
WORKING_NOTE = "What it is doing shows under this thread; the answer comes here."
ANSWER_BELOW = "The answer is below ↓"
LOADING = "is working…"  # the thread's loading status; `loading_line` says what it does
THINKING = "Thinking…"


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
    return placeholder(update.run_id)


def placeholder(run_id: str) -> Payload:
    """`render_placeholder` of run `run_id`, which may not be written yet: a turn's first sign
    (delivery/first_sign.py) is this message, posted before the turn's rows."""
    return Payload(WORKING, [section(f"*{WORKING}*"), context(WORKING_NOTE), stop_control(run_id)])


def render_retired() -> Payload:
    """A turn's old message once its answer was posted beside it (when it is not deleted)."""
    return Payload(ANSWER_BELOW, [context(ANSWER_BELOW)])


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
    return state.status.text if state.status else THINKING


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


# --- stream chunks (pure) -----------------------------------------------------------------
# A run in flight as stream chunks (pure): each tool call and each todo a `task_update`,
# the todo list's progress a `plan_update`, the turn itself one task that ends complete or in
# error. `ChunkDiff` remembers what the stream already shows, so each append carries only what
# changed and a burst of events costs one call.

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

    def unsent(self, chunks: list[Block]) -> None:
        """`chunks` (from `changed`) may not have reached Slack: the next `changed` gives
        them again (in their newest state). Tasks and the plan go by id, so twice is harmless."""
        for chunk in chunks:
            key = str(chunk.get("id", chunk["type"]))
            if self._shown.get(key) is chunk:
                del self._shown[key]


# --- the finished turn (pure) -------------------------------------------------------------
# The finished turn (pure): the answer as `markdown` blocks (mrkdwn as the fallback text),
# split within Slack's limits, its footer and buttons (Regenerate, the version switcher
# "◀ 2/3 ▶", Show thinking) and 👍 / 👎. A failed turn offers "Retry" instead of Regenerate:
# the same click, re-running the user's message.

MAX_MESSAGES = 3  # beyond this the full answer goes up as a file
PREVIEW_TEXT = 3000
EMPTY = "(empty answer)"
ATTACHED = "_The full answer is long, so it is attached below as a Markdown file._"


@dataclass(frozen=True, slots=True)
class AnswerLayout:
    main: Payload
    followups: list[Payload]
    attachment: str | None = None  # the whole answer in Markdown, to upload as a file


def answer_parts(markdown: str) -> list[str]:
    """The answer in parts of one `markdown` block each (Slack renders them: tables too, and
    nested fences, which mrkdwn flattens); fences are closed and reopened across parts."""
    return split_markdown(markdown.strip(), MAX_MARKDOWN) if markdown.strip() else []


def render_answer(update: RunUpdate, versions: Versions = Versions(), branched: bool = False,
                  usage: UsageShown = UsageShown.OFF) -> AnswerLayout:
    """The message(s) of a finished turn; the first replaces the live message. `usage`:
    SHOW_USAGE, what the footer says of its model calls."""
    head = [context(BRANCHED)] if branched else []
    tail = answer_controls(update, versions, usage)
    if update.status != MessageStatus.SUCCESS:
        status = presenting.status_line(update)
        return AnswerLayout(Payload(status, [*head, section(f"*{escape(status)}*"), *tail]), [])
    parts = answer_parts(update.state.final_text or "") or [EMPTY]
    if len(parts) > MAX_MESSAGES:
        main = Payload(fallback_text(parts[0]), [*head, markdown(parts[0]), section(ATTACHED), *tail])
        return AnswerLayout(main, [], update.state.final_text)
    main = Payload(fallback_text(parts[0]), [*head, markdown(parts[0]), *tail])
    return AnswerLayout(main, [Payload(fallback_text(p), [markdown(p)]) for p in parts[1:]])


def answer_controls(update: RunUpdate, versions: Versions,
                    usage: UsageShown = UsageShown.OFF) -> list[Block]:
    """What ends every answer: the footer, our buttons and (for an answer) 👍 / 👎."""
    blocks = [context(escape(presenting.footer(update, usage))), _buttons(update, versions)]
    if update.status == MessageStatus.SUCCESS:
        blocks.append(feedback_buttons(ids.FEEDBACK, ids.feedback_value("good", update.message_id),
                                       ids.feedback_value("bad", update.message_id)))
    return blocks


def fallback_text(markdown_part: str) -> str:
    """The `text` beside the blocks (notifications, old clients): mrkdwn, clipped."""
    return clip(to_mrkdwn(markdown_part), min(PREVIEW_TEXT, MAX_TEXT)) or EMPTY


def _buttons(update: RunUpdate, versions: Versions) -> Block:
    message_id = update.message_id
    elements = [_again(update)]
    if versions.total > 1:
        elements += _switcher(message_id, versions)
    elements.append(button("Show thinking", ids.SHOW_THINKING, ids.pack(message_id)))
    return actions(*elements)


def _again(update: RunUpdate) -> Block:
    """Regenerate, or for a failed turn a prominent Retry (it does the same)."""
    value = ids.pack(update.message_id)
    if update.status == MessageStatus.FAILED:
        return button("🔁 Retry", ids.REGENERATE, value, "primary")
    return button("Regenerate", ids.REGENERATE, value)


def _switcher(message_id: int, versions: Versions) -> list[Block]:
    label = f"{versions.position}/{versions.total}"
    elements = []
    if versions.previous_id is not None:
        elements.append(button("◀", ids.PREVIOUS, ids.pack(message_id, versions.previous_id)))
    elements.append(button(label, ids.POSITION, ids.pack(message_id)))
    if versions.next_id is not None:
        elements.append(button("▶", ids.NEXT, ids.pack(message_id, versions.next_id)))
    return elements


# --- the compaction divider (pure) --------------------------------------------------------
# The compaction divider (pure): "Earlier messages were summarised", the summary a click away.

SUMMARISED = "Earlier messages were summarised"


def render_divider(summary_id: int) -> Payload:
    return Payload(SUMMARISED, [
        divider(), section(f"🗜️ _{SUMMARISED} to keep the conversation within the model's context._"),
        actions(button("Show summary", ids.SHOW_SUMMARY, ids.pack(summary_id))), divider(),
    ])
