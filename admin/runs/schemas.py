"""Request and answer bodies of the run routes (camelCase JSON)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from admin.messages.thinking import ThinkingOut, thinking_out
from admin.runs.commands import RunOrder
from core.conversation.views import RunState, live_state
from admin.text import ClarifyId, MessageText, ModelId, Person, SkillFolder
from core.conversation.vocabulary import ClarifyOutcome, MessageStatus, PauseView, RunUpdate
from core.text.field_errors import MAX_ID

RunStatus = Literal["QUEUED", "RUNNING", "SUCCESS", "FAILED", "STOPPED"]
Iterations = Annotated[int, msgspec.Meta(ge=1, le=500)]
ParentId = Annotated[int, msgspec.Meta(ge=1, le=MAX_ID)]


class RunStart(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    """A user message and the run that answers it.

    `modelId` / `skillFolder` / `maxIterations` left out: the session's (or the defaults).
    `parentMessageId`: where the message goes (left out: the end of the active branch). A user
    message (an edit's new version) is answered as it is, so `message` repeats its text; an
    assistant message that is not the leaf gets the new user message as a new version of the
    turn after it; a summary is refused.
    """

    message: MessageText
    model_id: ModelId | None = None
    skill_folder: SkillFolder | None = None
    max_iterations: Iterations | None = None
    parent_message_id: ParentId | None = None

    def order(self) -> RunOrder:
        return RunOrder(self.message, self.model_id, self.skill_folder, self.max_iterations,
                        self.parent_message_id)


class ResumeIn(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    """The answer to the run's clarify question; the first answer wins."""

    clarify_id: ClarifyId
    answer: MessageText
    answered_by: Person = "admin"


class StartedOut(msgspec.Struct, frozen=True, rename="camel"):
    """The run's ids; `position` is its place in the queue while QUEUED (1 = next)."""

    run_id: str
    session_id: int
    message_id: int
    user_message_id: int
    status: RunStatus
    position: int | None


class RegeneratedOut(msgspec.Struct, frozen=True, rename="camel"):
    """The new assistant version and the run that writes it."""

    run_id: str
    new_message_id: int
    status: RunStatus
    position: int | None


class PendingClarifyOut(msgspec.Struct, frozen=True, rename="camel"):
    """A question the run waits on; answer it with POST /api/chat/runs/{runId}/resume."""

    clarify_id: str
    question: str
    choices: list[str]


class RunOut(msgspec.Struct, frozen=True, rename="camel"):
    run_id: str
    session_id: int
    user_message_id: int
    message_id: int
    status: RunStatus
    position: int | None
    model_id: str | None
    skill_folder: str | None
    pending_clarify: PendingClarifyOut | None
    error: str | None


class ActiveRunsOut(msgspec.Struct, frozen=True):
    """Runs this process drives: those running, then the queue in order (`position` 1 first)."""

    running: list[RunOut]
    queued: list[RunOut]


class RunStateOut(msgspec.Struct, frozen=True, rename="camel"):
    """Where a run is, for a client that lost its stream; `thinking` is its replayed state."""

    run_id: str
    session_id: int
    user_message_id: int | None
    message_id: int
    status: RunStatus
    position: int | None
    pending_clarify: PendingClarifyOut | None
    error: str | None
    thinking: ThinkingOut


class ResumeOut(msgspec.Struct, frozen=True, rename="camel"):
    """The answer was taken and the agent woken."""

    accepted: bool
    run_id: str
    clarify_id: str
    answer: str | None
    answered_by: str | None


def started_out(update: RunUpdate) -> StartedOut:
    return StartedOut(update.run_id, update.session_id, update.message_id,
                      update.user_message_id, _status(update.status), update.position)


def regenerated_out(update: RunUpdate) -> RegeneratedOut:
    return RegeneratedOut(update.run_id, update.message_id, _status(update.status), update.position)


def run_out(update: RunUpdate) -> RunOut:
    return RunOut(
        run_id=update.run_id, session_id=update.session_id,
        user_message_id=update.user_message_id, message_id=update.message_id,
        status=_status(update.status), position=update.position, model_id=update.model_id,
        skill_folder=update.skill_folder, pending_clarify=_pending(live_state(update).pause),
        error=update.error,
    )


def active_out(updates: list[RunUpdate]) -> ActiveRunsOut:
    running = [run_out(u) for u in updates if u.status == MessageStatus.RUNNING]
    queued = [run_out(u) for u in updates if u.status == MessageStatus.QUEUED]
    queued.sort(key=lambda r: (r.position is None, r.position or 0))
    return ActiveRunsOut(running, queued)


def state_out(state: RunState) -> RunStateOut:
    return RunStateOut(
        run_id=state.run_id, session_id=state.session_id,
        user_message_id=state.user_message_id, message_id=state.message_id,
        status=_status(state.status), position=state.position,
        pending_clarify=_pending(state.pause), error=state.error,
        thinking=thinking_out(state.thinking),
    )


def resume_out(run_id: str, outcome: ClarifyOutcome) -> ResumeOut:
    pause = outcome.pause
    return ResumeOut(outcome.accepted, run_id, pause.clarify_id, pause.answer, pause.answered_by)


def _pending(pause: PauseView | None) -> PendingClarifyOut | None:
    return None if pause is None else PendingClarifyOut(
        pause.clarify_id, pause.question, list(pause.choices)
    )


def _status(status: MessageStatus) -> RunStatus:
    return status.value  # type: ignore[return-value]  # an answer's status is one of these
