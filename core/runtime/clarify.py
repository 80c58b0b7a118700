"""Clarify pauses: persisted before anyone sees the question; the first answer wins."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from tortoise.exceptions import IntegrityError

from core.agent.bridge.port import Bridge
from core.agent.events import ClarifyRequest
from core.errors import BridgeUnavailable, Conflict, NotFound
from core.runtime.updates import PauseView
from core.store.models import IN_FLIGHT, ChatMessage, ClarifyPause, PauseKind, PauseStatus, utc_now


@dataclass(frozen=True, slots=True)
class ClarifyOutcome:
    """The result of an answer: accepted, or why not (already answered / expired)."""

    accepted: bool
    pause: PauseView
    reason: str | None = None
    continued: bool = False  # the Bridge no longer had the run: it goes on from its checkpoint


def view(pause: ClarifyPause) -> PauseView:
    """The pause as subscribers and renderers see it."""
    return PauseView(
        pause_id=pause.id, clarify_id=pause.clarify_id, question=pause.question,
        choices=tuple(pause.choices or ()), status=PauseStatus(pause.status),
        answer=pause.answer, answered_by=pause.answered_by, kind=PauseKind(pause.kind),
        tool=pause.tool, reason=pause.reason,
    )


async def persist_pause(run_id: str, message_id: int, event: ClarifyRequest) -> PauseView:
    """Store the question (idempotent on clarify_id: a replayed event, or a write retried
    after the database restarted, finds the same row)."""
    try:
        pause = await ClarifyPause.create(
            run_id=run_id, message_id=message_id, clarify_id=event.clarify_id,
            question=event.question, choices=list(event.choices),
        )
    except IntegrityError:
        pause = await ClarifyPause.get(clarify_id=event.clarify_id)
    return view(pause)


async def find_pause(clarify_id: str | None = None, pause_id: int | None = None) -> ClarifyPause:
    """A clarify pause by its clarify id or its row id; NotFound otherwise (a tool approval is
    decided through core/runtime/approvals.py, under its own policy)."""
    query = {"clarify_id": clarify_id} if clarify_id is not None else {"id": pause_id}
    pause = await ClarifyPause.get_or_none(kind=PauseKind.CLARIFY, **query)
    if pause is None:
        raise NotFound(f"no clarify question {clarify_id or pause_id}")
    return pause


async def answer_pause(bridge: Bridge, pause: ClarifyPause, answer: str, user: str | None,
                       wake: Callable[[], Awaitable[object]] | None = None) -> ClarifyOutcome:
    """Claim the pause for this answer, then wake the agent (`wake`, by default the clarify
    answer to the Bridge); a Bridge failure un-claims it."""
    claimed = await ClarifyPause.filter(id=pause.id, status=PauseStatus.UNANSWERED).update(
        status=PauseStatus.ANSWERED, answer=answer, answered_by=user, answered_at=utc_now()
    )
    if not claimed:
        current = await ClarifyPause.get(id=pause.id)
        return ClarifyOutcome(False, view(current), _why_not(current))
    try:
        await (wake() if wake is not None else bridge.answer_clarify(pause.clarify_id, answer))
    except BridgeUnavailable:
        await ClarifyPause.filter(id=pause.id).update(
            status=PauseStatus.UNANSWERED, answer=None, answered_by=None, answered_at=None
        )
        raise
    except NotFound:  # the Bridge forgot the run (it restarted): the answer stays, and the
        # run goes on from its checkpoint with it, unless the run is over
        if await ChatMessage.filter(id=pause.message_id, status__in=IN_FLIGHT).exists():
            return ClarifyOutcome(True, view(await ClarifyPause.get(id=pause.id)), continued=True)
        return await _expired(pause)
    except Conflict:  # the Bridge closed the question (the run was stopped, or waited past
        # the fallback): nobody can answer it now
        return await _expired(pause)
    return ClarifyOutcome(True, view(await ClarifyPause.get(id=pause.id)))


async def _expired(pause: ClarifyPause) -> ClarifyOutcome:
    await ClarifyPause.filter(id=pause.id).update(status=PauseStatus.EXPIRED)
    current = await ClarifyPause.get(id=pause.id)
    return ClarifyOutcome(False, view(current), "this question expired: the run is over")


def _why_not(pause: ClarifyPause) -> str:
    if pause.status == PauseStatus.EXPIRED:
        return "this question expired"
    who = pause.answered_by or "someone"
    return f"already answered by {who}: {pause.answer}"
