"""`Bridge`: what core needs from the Hermes Bridge; `BridgeClient` is the HTTP implementation."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Protocol

from core.agent.bridge.types import Health, Memory, RunRequest, RunState
from core.agent.events import Event

LastSeq = Callable[[], int]


class Bridge(Protocol):
    """The port the run pool and the session commands depend on."""

    def stream(self, request: RunRequest, last_seq: LastSeq | None = None) -> AsyncIterator[Event]:
        """Start a run and yield each of its events once, in order, until done/error."""
        ...

    def follow(self, run_id: str, last_seq: LastSeq | None = None) -> AsyncIterator[Event]:
        """Yield the events of a known run after `last_seq()`, once each, until done/error."""
        ...

    async def run_state(self, run_id: str) -> RunState:
        """Where a run stands ("unknown" if the Bridge never saw it or forgot it)."""
        ...

    async def abort(self, run_id: str) -> str:
        """Stop a run; its stream ends with an `error` event of code "aborted"."""
        ...

    async def answer_clarify(self, clarify_id: str, answer: str) -> str:
        """Wake the agent blocked on `clarify_id`; returns the run id."""
        ...

    async def steer(self, run_id: str, text: str) -> bool:
        """Guidance for a running turn, read by its agent at its next step."""
        ...

    async def answer_approval(self, run_id: str, approval_id: str, decision: str) -> str:
        """Wake the tool call waiting on `approval_id` with the decision; returns the run id."""
        ...

    async def reset_session(self, session_id: str) -> bool:
        """Drop the session's agent; True if one was loaded."""
        ...

    async def get_memory(self, session_id: str) -> Memory:
        """MEMORY.md and USER.md of the session."""
        ...

    async def set_memory(
        self, session_id: str, *, memory: str | None = None, user: str | None = None
    ) -> Memory:
        """Replace MEMORY.md and/or USER.md (None leaves one unchanged)."""
        ...

    async def health(self) -> Health:
        """Liveness and load of the Bridge."""
        ...
