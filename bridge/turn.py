"""One run: wait for the session's agent, run the turn on a thread, end the run's log."""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass
from typing import Any

from bridge.agent_factory import ModelChoice, refresh_system_prompt
from bridge.agent_pool import AgentPool
from bridge.approval_gate import ApprovalGate, StoredDecision
from bridge.callbacks import AgentCallbacks
from bridge.checkpoints import RESUME_MARKER, ConversationTap
from bridge.clarify_board import ClarifyBoard
from bridge.compaction import compaction_data
from bridge.emitter import RunEmitter
from bridge.session_history import SessionHistories
from bridge.threads import run_in_thread
from bridge.usage import UsageTap
from bridge.wire import RunRequest, message_content

logger = logging.getLogger(__name__)
Message = dict[str, Any]


@dataclass(frozen=True)
class TurnPlan:
    """Everything a turn needs, decided before it starts."""

    request: RunRequest
    model: ModelChoice
    history: list[Message] | None  # None: the session's history as the Bridge kept it
    max_iterations: int
    refresh_prompt: bool = False  # the session's memory was edited since its last turn
    resumed: bool = False  # `history` is a turn another Bridge process began: go on from it
    stored_decision: StoredDecision | None = None  # given to the approval the turn waited on

    @property
    def user_message(self) -> str | list[Message]:
        """What `run_conversation` gets as the user message (a resumed turn's is in history):
        content parts when it came with files, else its text."""
        if self.resumed:
            return RESUME_MARKER
        return self.user_turn["content"]

    @property
    def user_turn(self) -> Message:
        """The user message of this turn as the conversation holds it."""
        request = self.request
        if request.user_content is None:
            return {"role": "user", "content": request.user_message}
        return {"role": "user", "content": message_content(request.user_content)}


class Turn:
    """Runs one plan; `abort()` may be called from the event loop at any time."""

    def __init__(self, plan: TurnPlan, emitter: RunEmitter, pool: AgentPool,
                 board: ClarifyBoard, histories: SessionHistories) -> None:
        self.plan = plan
        self._emitter = emitter
        self._pool = pool
        self._board = board
        self._histories = histories
        self._agent: Any = None
        self._steers: list[str] = []  # guidance given before the agent was leased
        self.aborted = False

    async def run(self) -> None:
        """Lease the agent (after the session's previous turn) and converse."""
        request = self.plan.request
        async with self._pool.lease(request.session_id, self.plan.model) as agent:
            if self.aborted:
                return
            history = self._history()
            tap = ConversationTap(resuming=self.plan.resumed)
            callbacks = AgentCallbacks(self._emitter, self._board, request.run_id,
                                       self._interrupt, tap)
            callbacks.install(agent)
            tap.install(agent)
            usage = UsageTap(self._emitter, self.plan.model.name)
            usage.install(agent)
            gate = ApprovalGate(self._board, request.run_id, tuple(request.approved_patterns),
                                self.plan.stored_decision, callbacks.approval, callbacks.tool_of,
                                refuse_all=request.approvals == "deny")
            self._agent = agent
            for text in self._steers:
                agent.steer(text)
            try:
                name = f"turn-{request.run_id}"
                result = await run_in_thread(lambda: self._converse(agent, history, gate), name)
            finally:
                self._agent = None
                tap.remove(agent)
                usage.remove()
            current = self._pool.holds(request.session_id, agent)  # False: reset meanwhile
        self._finish(result, callbacks, history, current)

    def _history(self) -> list[Message]:
        """The conversation before this turn; the Bridge's own is read only now, so a turn
        queued behind another of its session sees that one too."""
        if self.plan.history is not None:
            return self.plan.history
        return self._histories.get(self.plan.request.session_id)

    def abort(self) -> None:
        """End the stream now; interrupt the agent and release a pending clarify or approval."""
        self.aborted = True
        self._emitter.emit_now("error", {"message": "the run was aborted", "code": "aborted"})
        self._board.cancel_run(self.plan.request.run_id)
        self._interrupt()

    def release(self) -> None:
        """The Bridge stops: end the turn here without ending the run. Nothing more is emitted
        (no `aborted`): the runtime finds the run gone and continues it from its last checkpoint
        on the Bridge that answers next."""
        self.aborted = True
        self._emitter.close()
        self._board.cancel_run(self.plan.request.run_id)
        self._interrupt()

    def steer(self, text: str) -> None:
        """Guidance for the turn: its agent reads it at its next step (now, or once leased)."""
        agent = self._agent
        if agent is None:
            self._steers.append(text)
        else:
            agent.steer(text)

    def _interrupt(self) -> None:
        agent = self._agent
        if agent is not None:
            agent.interrupt()

    def _converse(self, agent: Any, history: list[Message], gate: ApprovalGate) -> dict[str, Any]:
        request = self.plan.request
        if self.plan.refresh_prompt:
            refresh_system_prompt(agent)
        agent.ephemeral_system_prompt = request.system_prompt
        agent.max_iterations = self.plan.max_iterations
        with gate.bound():
            return agent.run_conversation(
                self.plan.user_message, conversation_history=copy.deepcopy(history)
            )

    def _finish(self, result: dict[str, Any], callbacks: AgentCallbacks,
                history: list[Message], current: bool) -> None:
        messages = result.get("messages")
        if isinstance(messages, list):
            self._remember(messages, current)
        if callbacks.compressed and isinstance(messages, list):
            conversation = history if self.plan.resumed else [*history, self.plan.user_turn]
            data = compaction_data(messages, conversation)
            if data is not None:
                self._emitter.emit_now("context_compacted", data)
        self._emitter.emit_now(*_terminal_event(result, callbacks, self.plan.model.name))

    def _remember(self, messages: list[Message], current: bool) -> None:
        session_id = self.plan.request.session_id
        if self.plan.history is not None:
            # The caller keeps this session's conversation; a copy here would only grow.
            self._histories.drop(session_id)
        elif current:
            self._histories.set(session_id, messages)


def _terminal_event(result: dict[str, Any], callbacks: AgentCallbacks,
                    model: str) -> tuple[str, dict]:
    if callbacks.clarify_expired:
        return "error", {"message": "nobody answered the clarify question in time",
                         "code": "clarify_expired"}
    if result.get("interrupted"):
        return "error", {"message": "the run was interrupted", "code": "aborted"}
    if result.get("failed") or (result.get("error") and not result.get("completed")):
        message = str(result.get("error") or result.get("final_response") or "the LLM failed")
        return "error", {"message": f"LLM error: {message}", "code": "llm_error"}
    return "done", {"final_text": str(result.get("final_response") or ""), "model": model}
