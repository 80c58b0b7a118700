"""The Bridge's operations, one method per endpoint; routes only translate HTTP."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from bridge.agent_factory import choose_model, choose_toolsets
from bridge.agent_pool import AgentPool
from bridge.approval_gate import TICKET_PREFIX, StoredDecision
from bridge.checkpoints import continuation
from bridge.clarify_board import ClarifyBoard
from bridge.emitter import RunEmitter
from bridge.errors import (
    ApprovalAnswered,
    ApprovalNotFound,
    ClarifyAnswered,
    ClarifyNotFound,
    InvalidRequest,
    RunFinished,
    RunNotFound,
)
from bridge.memory_scopes import MemoryScopes
from bridge.run_log import RunLog
from bridge.run_registry import RunRegistry
from bridge.session_history import SessionHistories
from bridge.settings import BridgeSettings
from bridge.turn import Turn, TurnPlan
from bridge.wire import ApprovalAnswer, RunRequest, message_content

logger = logging.getLogger(__name__)
_ABORTED_UNSEEN = {"message": "the run was aborted before it started", "code": "aborted"}
RESUMED = {"category": "resumed",
           "message": "Resumed after a restart of the agent service: the last step runs again."}
ANSWERED = {"category": "resumed",
            "message": "Resumed with the answer after a restart of the agent service."}
DECIDED = {"category": "resumed",
           "message": "Resumed with the approval decision after a restart of the agent service: "
                      "the step that asked for it runs again."}


class BridgeService:
    """Runs, clarifies, sessions and memory (event-loop side)."""

    def __init__(self, settings: BridgeSettings, runs: RunRegistry, pool: AgentPool,
                 board: ClarifyBoard, scopes: MemoryScopes, secrets: Mapping[str, str]) -> None:
        self.settings = settings
        self.runs = runs
        self.pool = pool
        self.board = board
        self.scopes = scopes
        self._secrets = secrets
        self._histories = SessionHistories()
        self._turns: dict[str, Turn] = {}
        self._memory_edited: set[str] = set()  # sessions whose prompt must be rebuilt
        self._tasks: set[asyncio.Task[None]] = set()

    def start_run(self, request: RunRequest) -> RunLog:
        """Validate, record and start a run; it goes on whoever listens."""
        plan = self._plan(request)
        first_id = request.resume.first_event_id if request.resume else 1
        log = self.runs.create(request.run_id, request.session_id, first_id)
        self._memory_edited.discard(request.session_id)
        emitter = RunEmitter(log, asyncio.get_running_loop(), secret=plan.model.api_key)
        if request.resume is not None:
            emitter.emit_now("status", _resumed_status(request))
        turn = Turn(plan, emitter, self.pool, self.board, self._histories)
        for text in request.resume.steers if request.resume else ():
            turn.steer(text)  # given to the turn on the Bridge it left, after its checkpoint
        self._turns[request.run_id] = turn
        task = asyncio.create_task(self._guarded(turn, emitter), name=f"run-{request.run_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return log

    def _plan(self, request: RunRequest) -> TurnPlan:
        """The model, the conversation the agent sees, and its limits."""
        model = replace(choose_model(request.model, self.settings, self._secrets),
                        toolsets=choose_toolsets(request.toolsets, self.settings))
        history = None  # the session's own, read when the turn starts
        if request.history is not None:  # the caller's branch, exactly
            history = [{"role": m.role, "content": message_content(m.content)}
                       for m in request.history]
        resume = request.resume
        if resume is not None:  # the turn so far, as its last checkpoint left it
            answer = (resume.clarify.call_id, resume.clarify.answer) if resume.clarify else None
            history = continuation(resume.messages, answer)
        refresh = request.session_id in self._memory_edited
        iterations = request.max_iterations or self.settings.max_iterations
        stored = None
        if resume is not None and resume.approval is not None:
            given = resume.approval
            stored = StoredDecision(given.pattern_key, given.command, given.decision)
        return TurnPlan(request, model, history, iterations, refresh,
                        resumed=resume is not None, stored_decision=stored)

    async def _guarded(self, turn: Turn, emitter: RunEmitter) -> None:
        """The error boundary of a run: a bug ends the run with `internal`, never the Bridge."""
        try:
            await turn.run()
        except Exception as exc:
            logger.exception("run %s failed", turn.plan.request.run_id)
            emitter.emit_now("error", {"message": f"internal error: {exc}", "code": "internal"})
        finally:
            self._turns.pop(turn.plan.request.run_id, None)

    def abort(self, run_id: str) -> dict[str, Any]:
        log = self.runs.find(run_id)
        if log is None:
            # A client whose POST /run timed out aborts it: if that request is still on its
            # way, it must not start an agent nobody follows, so the id is taken as ended.
            self.runs.create(run_id, "").append("error", _ABORTED_UNSEEN)
            raise RunNotFound(f"no run {run_id!r}; a start of it will be refused")
        turn = self._turns.get(run_id)
        if log.finished or turn is None:
            raise RunFinished(f"run {run_id!r} has already ended ({log.state})")
        turn.abort()
        return {"run_id": run_id, "state": log.state}

    def steer(self, run_id: str, text: str) -> dict[str, Any]:
        """Guidance for a running turn, read by its agent at its next step (hermes-agent's
        `steer`: appended to the next tool result)."""
        log = self.runs.find(run_id)
        if log is None:
            raise RunNotFound(f"no run {run_id!r}")
        turn = self._turns.get(run_id)
        if log.finished or turn is None:
            raise RunFinished(f"run {run_id!r} has already ended ({log.state})")
        turn.steer(text)
        return {"run_id": run_id, "accepted": True}

    def status(self, run_id: str) -> dict[str, Any]:
        log = self.runs.find(run_id)
        if log is None:
            return {"run_id": run_id, "session_id": None, "state": "unknown",
                    "last_event_id": 0, "pending_clarify": None, "pending_approval": None}
        return {"run_id": run_id, "session_id": log.session_id, "state": log.state,
                "last_event_id": log.last_event_id, "pending_clarify": log.pending_clarify,
                "pending_approval": log.pending_approval}

    def answer_clarify(self, clarify_id: str, answer: str) -> dict[str, Any]:
        if clarify_id.startswith(f"{TICKET_PREFIX}-"):  # decided only by its own route
            raise ClarifyNotFound(f"no clarify {clarify_id!r}")
        ticket = self.board.answer(clarify_id, answer)
        log = self.runs.find(ticket.run_id)
        if log is not None:
            log.clarify_resolved()
        return {"clarify_id": clarify_id, "run_id": ticket.run_id}

    def answer_approval(self, run_id: str, body: ApprovalAnswer) -> dict[str, Any]:
        """Wake the tool waiting on `approval_id` of `run_id` with the decision."""
        ticket = self.board.find(body.approval_id)
        if ticket is None or ticket.run_id != run_id \
                or not ticket.clarify_id.startswith(f"{TICKET_PREFIX}-"):
            raise ApprovalNotFound(f"no approval {body.approval_id!r} in run {run_id!r}")
        if body.decision not in ticket.choices:
            raise InvalidRequest(f"decision must be one of {ticket.choices}, "
                                 f"got {body.decision!r}")
        try:
            self.board.answer(body.approval_id, body.decision)
        except ClarifyAnswered as exc:
            raise ApprovalAnswered(exc.message) from None
        log = self.runs.find(run_id)
        if log is not None:
            log.clarify_resolved()
        return {"approval_id": body.approval_id, "run_id": run_id, "decision": body.decision}

    def reset_session(self, session_id: str) -> dict[str, Any]:
        """Drop the session's agent (`dropped` says whether there was one) and its history."""
        self._histories.drop(session_id)
        return {"session_id": session_id, "dropped": self.pool.drop(session_id)}

    def read_memory(self, session_id: str) -> dict[str, Any]:
        return {"session_id": session_id, **self.scopes.read(session_id)}

    def write_memory(self, session_id: str, updates: dict[str, str]) -> dict[str, Any]:
        files = self.scopes.write(session_id, updates)
        # hermes-agent freezes memory into the session's system prompt: rebuild it next turn.
        self._memory_edited.add(session_id)
        return {"session_id": session_id, **files}

    def health(self) -> dict[str, Any]:
        return {"status": "ok", "runs": len(self.runs.active()), "agents": len(self.pool),
                "instance": self.settings.instance}

    def prune(self) -> None:
        """Forget runs past their retention (and their clarify records)."""
        self.board.forget_runs(self.runs.prune())

    def shutdown(self) -> None:
        """Release every blocked thread and close the agents; the runs are left unended, for
        the runtime to continue on the next Bridge (docs/bridge-protocol.md, "Durable turns")."""
        for turn in list(self._turns.values()):
            turn.release()
        for task in self._tasks:
            task.cancel()
        self.pool.close_all()


def _resumed_status(request: RunRequest) -> dict[str, str]:
    resume = request.resume
    if resume is not None and resume.clarify is not None:
        return ANSWERED
    if resume is not None and resume.approval is not None:
        return DECIDED
    return RESUMED
