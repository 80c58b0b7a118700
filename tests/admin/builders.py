"""Conversations in the database, built through core as the bots will build them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from core.agent.events import (
    ClarifyRequest,
    Done,
    Event,
    Status,
    Step,
    TextDelta,
    Todo,
    TodoUpdate,
    ToolEnd,
    ToolStart,
    event_to_log,
)
from core.chat import sessions, tree
from core.store.models import (
    ChatMessage,
    ChatMessageLog,
    ChatSession,
    MessageStatus,
    Platform,
)
from tests.core.chat.tree_helpers import answer, user_turn

T0 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


async def conversation(
    title: str | None, *turns: tuple[str, str], platform: Platform | None = None,
    thread: str = "1700.1", at: datetime | None = None,
) -> ChatSession:
    """A session with question/answer turns, optionally bound to a platform thread."""
    if platform is None:
        session = await sessions.create_session(title=title)
    else:
        key = sessions.ThreadKey(platform, "W1", "C1", thread)
        session, _ = await sessions.session_for_thread(key, title=title)
    for question, reply in turns:
        await answer(session.id, await user_turn(session.id, question), reply)
    if at is not None:
        await sessions.touch_session(session.id, at)
    return await sessions.get_session(session.id)


async def running_turn(session_id: int, question: str, status: MessageStatus) -> ChatMessage:
    """A user message and its assistant answer still QUEUED or RUNNING (no text yet)."""
    user = await user_turn(session_id, question)
    return await tree.append_assistant(session_id, user.id, status=status, run_id=f"run-{user.id}")


def thinking_events() -> list[Event]:
    """One run of real Bridge events: thinking, a step, a tool, todos, a clarify, the answer."""
    def at(seq: int) -> datetime:
        return T0 + timedelta(seconds=seq)

    return [
        TextDelta(seq=1, at=at(1), text="Let me look "),
        TextDelta(seq=2, at=at(2), text="at the logs."),
        Step(seq=3, at=at(3), iteration=1),
        Status(seq=4, at=at(4), category="lifecycle", message="Reading files"),
        ToolStart(seq=5, at=at(5), tool_call_id="c1", tool_name="read_file", args={"path": "a.log"}),
        ToolEnd(seq=6, at=at(6), tool_call_id="c1", tool_name="read_file", result="3 errors"),
        TodoUpdate(seq=7, at=at(7), todos=(
            Todo("1", "Read the logs", "completed"), Todo("2", "Explain", "in_progress"),
        )),
        ClarifyRequest(seq=8, at=at(8), clarify_id="q1", question="Which day?", choices=("Mon", "Tue")),
        TextDelta(seq=9, at=at(9), text=" Monday it is."),
        Done(seq=10, at=at(10), final_text="Three errors on Monday."),
    ]


async def store_logs(message_id: int, events: Sequence[Event]) -> None:
    """The log rows the run pool would have written for these events."""
    records = [event_to_log(event) for event in events]
    await ChatMessageLog.bulk_create([
        ChatMessageLog(
            message_id=message_id, seq=r.seq, kind=r.kind, content=r.content,
            tool_name=r.tool_name, meta_json=r.meta_json, created_at=r.created_at,
        )
        for r in records
    ])
