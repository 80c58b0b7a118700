"""Continue a run its Bridge lost (the Bridge process restarted, or `serve` did): the turn goes
on from its last checkpoint on whichever Bridge answers now.

- A turn cut mid-step is driven again from its last completed step: the checkpoint's messages
  (none stored yet: the turn's start, its history and user message), so at most the step that
  was running when the Bridge died runs again.
- A turn that waited on a clarify waits here for the answer, with no thread and no limit but
  the clarify fallback; the answer then becomes that clarify tool call's result.
- A turn that waited on a tool approval waits the same way for the decision; its checkpoint
  ends before the model call that asked for the tool, so that step runs again and the Bridge
  applies the decision to the same command when the model asks for it (a different command is
  asked about anew).
- Guidance people gave the turn (BUSY_MODE steer) that the checkpoint does not hold is given
  to the continued turn again: the step that reads it is the one run again.

The Bridge goes on from the checkpoint's messages alone, so the request's `history` is empty
and it has no `user_content`: the earlier files and the turn's own travel once, in `messages`.

The resumed turn's events continue the run's ids (`first_event_id`), so every log row is stored
once, under the same assistant message; the Bridge opens it with a `resumed` status the chat
shows.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any, cast

import msgspec

from core.agent.bridge.types import (
    STEER_CHARS,
    ApprovalResume,
    ClarifyResume,
    Decision,
    Resume,
    RunRequest,
)
from core.errors import HermesChatError
from core.agent.events import Event
from core.chat.tree import STEER
from core.store.models import ChatMessage, ClarifyPause, PauseStatus
from core.runtime.checkpoints import StoredCheckpoint, load_checkpoint
from core.runtime.clarify import view
from core.runtime.context import RunContext
from core.runtime.live import LiveRun
from core.runtime.requests import build_request


PAUSE_POLL_SECONDS = 5.0  # an answer taken by another replica is seen within this
EXPIRED = "Nobody answered the question in time, so this run ended."
Message = dict[str, Any]


async def continue_run(pool: RunContext, live: LiveRun,
                       max_iterations: int | None = None) -> AsyncIterator[Event]:
    """The events of the run continued from its checkpoint (after the answer, if it waits on a
    clarify); raises HermesChatError if its question expired meanwhile."""
    await pool.durably(pool.buffer.flush)  # its latest checkpoint, and every row before it
    point = await pool.durably(load_checkpoint, live.message_id)
    request = await pool.durably(build_request, live, pool.catalogue, max_iterations,
                                   pool.history_attachment_bytes)
    messages, clarify = await _where_to_go_on(pool, live, point, request)
    approval = await _decision(pool, live, point.approval_id) if point and point.approval_id \
        else None
    seen = (pool.buffer.persisted_seq(live.message_id), live.state.last_seq,
            live.checkpoint_seq, point.seq if point else 0)
    resume = Resume(first_event_id=max(seen) + 1, messages=tuple(messages), clarify=clarify,
                    approval=approval, steers=await pool.durably(_guidance, live, point))
    # `messages` hold the history and the user message, files and all: sent once, not twice.
    resumed = msgspec.structs.replace(request, resume=resume, history=(), user_content=None)
    return pool.bridge.stream(resumed, lambda: pool.buffer.persisted_seq(live.message_id))


async def _where_to_go_on(pool: RunContext, live: LiveRun, point: StoredCheckpoint | None,
                          request: RunRequest) -> tuple[list[Message], ClarifyResume | None]:
    if point is None:  # no step completed: the turn from its start
        return _turn_start(request), None
    if point.call_id is None or point.clarify_id is None:
        return point.messages, None
    answer = await _answer(pool, live, point.clarify_id)
    if answer is None:  # the question never reached the chat: the model asks again
        return _before_call(point.messages, point.call_id), None
    return point.messages, ClarifyResume(point.call_id, answer)


async def _answer(pool: RunContext, live: LiveRun, clarify_id: str) -> str | None:
    """The answer to the question, once there is one (None: no such question was stored)."""
    while True:
        live.answered.clear()
        pause = await pool.durably(ClarifyPause.get_or_none, clarify_id=clarify_id)
        if pause is None:
            return None
        if pause.status == PauseStatus.ANSWERED:
            return pause.answer or ""
        if pause.status == PauseStatus.EXPIRED:
            raise HermesChatError(EXPIRED)
        if live.show(view(pause)):
            pool.publish(live)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(live.answered.wait(), PAUSE_POLL_SECONDS)


async def _decision(pool: RunContext, live: LiveRun, approval_id: str) -> ApprovalResume | None:
    """The decision on the approval the turn waited on, once there is one (None: it never
    reached the chat, so the resumed step asks again)."""
    decision = await _answer(pool, live, approval_id)
    if decision is None:
        return None
    pause = await pool.durably(ClarifyPause.get, clarify_id=approval_id)
    return ApprovalResume(pause.pattern_key or "", pause.question, cast(Decision, decision))


async def _guidance(live: LiveRun, point: StoredCheckpoint | None) -> tuple[str, ...]:
    """The guidance people gave the turn (its steer messages) that its checkpoint does not
    hold: the agent appends guidance to a tool result, so guidance found in none of the
    checkpoint's tool results was read in the step that is run again, or not read yet."""
    given: list[str] = await ChatMessage.filter(  # type: ignore[assignment]
        parent_id=live.message_id, kind=STEER).order_by("id").values_list("content", flat=True)
    held = "\n".join(str(m.get("content") or "") for m in (point.messages if point else ())
                     if m.get("role") == "tool")
    return tuple(text for text in given
                 if text.strip() and len(text) <= STEER_CHARS and text.strip() not in held)


def _turn_start(request: RunRequest) -> list[Message]:
    history = [{"role": m.role, "content": m.content} for m in request.history or ()]
    return [*history, request.user_turn]


def _before_call(messages: list[Message], call_id: str) -> list[Message]:
    """The messages before the assistant message that made the tool call `call_id`."""
    for index in range(len(messages) - 1, -1, -1):
        calls = messages[index].get("tool_calls") or ()
        if any(isinstance(c, dict) and c.get("id") == call_id for c in calls):
            return messages[:index]
    return messages
