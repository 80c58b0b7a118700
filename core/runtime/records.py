"""The database side of a run: insert its tree nodes, move its status, add its summaries.

What a run writes while it streams is idempotent (a status, an answer, a summary found before
it is added again), so the runner may retry it through a database outage (core.store.outage.outlast).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tortoise.exceptions import IntegrityError

from core.chat import attachment_store, sessions, tree
from core.chat.attachments import StoredFile
from core.store.outage import transaction
from core.errors import Busy, InvalidInput, NotFound
from core.store.models import (
    ENDED, IN_FLIGHT, ChatMessage, ChatSession, ClarifyPause, MessageStatus, PauseStatus, Role,
    RunCheckpoint, utc_now,
)



@dataclass(frozen=True, slots=True)
class Turn:
    """The two nodes of one run: the user message it answers and the assistant message."""

    session: ChatSession
    user: ChatMessage
    assistant: ChatMessage


async def busy_run(session_id: int) -> str | None:
    """The run id in flight in this session (any replica), if there is one."""
    message = await ChatMessage.filter(session_id=session_id, status__in=IN_FLIGHT).first()
    return message.run_id if message else None


async def first_answer(session_id: int) -> ChatMessage | None:
    """The answer of the session's first turn, once that turn is written."""
    return await ChatMessage.filter(session_id=session_id, role=Role.ASSISTANT).order_by("id").first()


async def last_in_line(session_id: int) -> str | None:
    """The newest run in flight in this session: the one a run queued now waits for."""
    message = await ChatMessage.filter(session_id=session_id, status__in=IN_FLIGHT,
                                       role=Role.ASSISTANT).order_by("-id").first()
    return message.run_id if message else None


async def queue_position(session_id: int, message_id: int) -> int:
    """How many runs of the session are ahead of this queued answer (1: it runs next)."""
    return await ChatMessage.filter(session_id=session_id, status__in=IN_FLIGHT,
                                    role=Role.ASSISTANT, id__lt=message_id).count()


@asynccontextmanager
async def locked_session(session_id: int, allow_busy: bool = False) -> AsyncIterator[ChatSession]:
    """The session row locked in an open transaction, after the database's busy check (Busy
    while a run is in flight in it, on any replica, unless `allow_busy`): a tree change made
    inside the block is ordered against every other start, edit and switch of the session."""
    async with transaction():
        session = await ChatSession.select_for_update().get_or_none(id=session_id)
        if session is None:
            raise NotFound(f"no chat session {session_id}")
        if not allow_busy and (running := await busy_run(session_id)):
            raise Busy(f"session {session_id} is still working on run {running}")
        yield session


async def insert_turn(
    session_id: int, run_id: str, status: MessageStatus, *, text: str | None = None,
    user_message_id: int | None = None, regenerate_of: int | None = None,
    edit_of: int | None = None, allow_busy: bool = False, files: Sequence[StoredFile] = (),
    **fields: Any,
) -> Turn:
    """In one transaction: the busy check, the user node (unless given; an edit's new version
    of `edit_of`, which keeps its files) with its `files`, and the assistant node. A refused
    turn changes nothing in the tree.

    With `allow_busy`, a turn started while a run is in flight in the session is QUEUED behind
    it. The database allows one other in-flight answer per session (0008_one_run_per_session):
    a start that lost the race to another replica's is refused as Busy by the constraint."""
    async with one_run_at_a_time(session_id), locked_session(session_id, allow_busy) as session:
        answer_fields = {"run_id": run_id, **_answer_fields(fields)}
        if allow_busy and (running := await last_in_line(session_id)):
            status, answer_fields["queued_behind"] = MessageStatus.QUEUED, running
        if edit_of is not None:  # the edited user node, made only now the session is free
            user_fields = {k: v for k, v in fields.items() if k in USER_ONLY}
            user = await tree.edit(edit_of, text or "", session_id, **user_fields)
            assistant = await tree.add_child(session_id, user.id, Role.ASSISTANT, status,
                                             **answer_fields)
        elif regenerate_of is not None:  # no new user node: the fields are the new answer's
            assistant = await tree.regenerate(regenerate_of, session_id, status, run_id=run_id,
                                              **fields)
            user = await tree.get_message(tree.question_of(assistant), session_id)
        elif user_message_id is not None:  # an edit's new user node: run under it as it is
            user = await tree.get_message(user_message_id, session_id)
            if user.role != Role.USER:
                raise InvalidInput(f"message {user_message_id} is not a user message")
            assistant = await tree.add_child(session_id, user.id, Role.ASSISTANT, status,
                                             **answer_fields)
        else:  # the session is locked above, as `append_turn_locked` needs
            user_fields = {k: v for k, v in fields.items() if k in USER_ONLY}
            user, assistant = await tree.append_turn_locked(
                session_id, text or "", status, user_fields, answer_fields)
            await attachment_store.save(user.id, files)
    return Turn(session, user, assistant)


@asynccontextmanager
async def one_run_at_a_time(session_id: int) -> AsyncIterator[None]:
    """Turn the database's one-run-per-session constraint, broken by a start that lost the
    race to another replica's, into the Busy every other refusal of a busy session is."""
    try:
        yield
    except IntegrityError as error:
        if not await busy_run(session_id):
            raise
        raise Busy(f"session {session_id} is still working on another run") from error


# What a turn's fields put on its user message: who wrote it, its platform id, its thread
# context and where the turn shows (`platform_refs`: every version of the answer shows there).
USER_ONLY = ("author", "platform_message_id", "thread_context", "platform_refs")


def _answer_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """What of a turn's fields the answer takes: not who wrote the question, nor its id."""
    return {k: v for k, v in fields.items() if k not in USER_ONLY}


async def leave_queue(message_id: int) -> bool:
    """Mark an assistant message RUNNING unless it ended meanwhile (a Stop recorded by another
    replica while it was queued here): whether the run may start. One statement, so a Stop
    cannot slip in between a check and the write."""
    try:
        return bool(await ChatMessage.filter(id=message_id, status__in=IN_FLIGHT)
                    .update(status=MessageStatus.RUNNING, queued_behind=None))
    except IntegrityError as error:  # the run it queued behind is still in flight
        raise Busy("the conversation is still working on an earlier run") from error


async def ended_status(message_id: int) -> tuple[MessageStatus, str | None]:
    """How an assistant message that is no longer in flight ended: its status and error."""
    row = await ChatMessage.filter(id=message_id).only("id", "status", "error").first()
    if row is None:  # its session was deleted meanwhile
        return MessageStatus.STOPPED, "Stopped."
    return MessageStatus(row.status), row.error


async def set_status(message_id: int, status: MessageStatus, **values: object) -> None:
    """Move an assistant message to `status`; a finished one gets completed_at, and a question
    it left unanswered (stopped or failed while waiting) expires: nobody can answer it now."""
    if status in ENDED:
        values.setdefault("completed_at", utc_now())
    await ChatMessage.filter(id=message_id).update(status=status, **values)
    if status in ENDED:
        await expire_questions(message_id)
        await RunCheckpoint.filter(message_id=message_id).delete()  # no turn to continue now


async def expire_questions(message_id: int) -> None:
    """The message's unanswered questions expire: its run ended, or is being stopped."""
    await ClarifyPause.filter(message_id=message_id, status=PauseStatus.UNANSWERED).update(
        status=PauseStatus.EXPIRED)


async def finish_success(turn: Turn, final_text: str, at: datetime | None = None) -> None:
    """SUCCESS with the answer; the session sorts first and gets its title if it had none.

    The status is written last: the process driving the run frees the session as soon as
    that write returns, so whoever reads SUCCESS in the database (a client, another replica)
    is not refused as busy when it sends the session's next message."""
    await sessions.touch_session(turn.session.id, at)
    await sessions.auto_title(turn.session.id, turn.user.content)
    await set_status(turn.assistant.id, MessageStatus.SUCCESS, content=final_text, error=None)


async def add_compaction(turn: Turn, after_message_id: int, summary: str) -> ChatMessage:
    """A SYSTEM/SUMMARY node where the agent's context was compacted; a retried write (the
    database restarted after committing it) or a replayed event finds the node already there."""
    node = await ChatMessage.filter(
        session_id=turn.session.id, parent_id=after_message_id, role=Role.SYSTEM,
        status=MessageStatus.SUMMARY, content=summary,
    ).first()
    if node is None:
        node = await tree.add_summary(turn.session.id, after_message_id, summary)
    await ChatSession.filter(id=turn.session.id).update(last_summarized_at=utc_now())
    return node
