"""The state of a run: the pool's live view when this process drives it, else the database's."""

from __future__ import annotations

from dataclasses import dataclass

from admin.runs.commands import run_message
from core.agent.thinking import ThinkingState
from core.chat.message_views import message_views
from core.runtime.clarify import view as pause_view
from core.runtime.pool import RunPool
from core.runtime.updates import PauseView, RunUpdate
from core.store.models import ClarifyPause, MessageStatus, PauseKind, PauseStatus


@dataclass(frozen=True, slots=True)
class RunState:
    """Where a run is; `pause` is the question it waits on (None once answered)."""

    run_id: str
    session_id: int
    user_message_id: int | None
    message_id: int
    status: MessageStatus
    position: int | None
    pause: PauseView | None
    error: str | None
    thinking: ThinkingState


async def run_state(pool: RunPool, run_id: str) -> RunState:
    """The live view of a run driven here; otherwise its message, log replay and open question."""
    update = pool.view(run_id)
    if update is not None:
        return live_state(update)
    message = await run_message(run_id)
    [replayed] = await message_views([message.id])
    pause = await ClarifyPause.filter(run_id=run_id, kind=PauseKind.CLARIFY,  # not approvals
                                      status=PauseStatus.UNANSWERED).order_by("-id").first()
    return RunState(
        run_id=run_id, session_id=message.session_id, user_message_id=message.parent_id,
        message_id=message.id, status=message.status, position=None,
        pause=pause_view(pause) if pause is not None else None, error=message.error,
        thinking=replayed.thinking or ThinkingState(),
    )


def live_state(update: RunUpdate) -> RunState:
    """A pool update as a state: only an unanswered question is pending."""
    pending = update.pause if update.pause and update.pause.status == PauseStatus.UNANSWERED else None
    return RunState(
        run_id=update.run_id, session_id=update.session_id,
        user_message_id=update.user_message_id, message_id=update.message_id,
        status=update.status, position=update.position, pause=pending, error=update.error,
        thinking=update.state,
    )
