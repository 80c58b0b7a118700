"""The in-memory side of one run: its nodes, its folded state, and its update."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from core.events import Event
from core.models import MessageStatus
from core.runtime.records import Turn
from core.runtime.updates import PauseView, RunUpdate
from core.thinking import ThinkingState, fold


@dataclass(eq=False)
class LiveRun:
    """One run this process drives; `update` is what subscribers see."""

    run_id: str
    turn: Turn
    status: MessageStatus
    folded: ThinkingState = field(default_factory=ThinkingState)
    position: int | None = None
    announced_position: int | None = None  # the queue position subscribers were last woken for
    pause: PauseView | None = None
    error: str | None = None
    summary_ids: tuple[int, ...] = ()
    history_ids: tuple[int, ...] = ()
    task: asyncio.Task[None] | None = None
    finished_at: float | None = None
    events: list[Event] = field(default_factory=list)  # what admin SSE followers replay
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    dirty: bool = False  # an announcement to subscribers is already scheduled

    @property
    def session_id(self) -> int:
        return self.turn.session.id

    @property
    def message_id(self) -> int:
        return self.turn.assistant.id

    unfolded: list[Event] = field(default_factory=list)  # received, not yet in `folded`

    @property
    def state(self) -> ThinkingState:
        """The state with every event received so far; events are folded when it is read
        (about once per turn of the event loop), a burst of deltas in one go."""
        if self.unfolded:
            self.folded = fold(self.unfolded, self.folded)
            self.unfolded.clear()
        return self.folded

    @state.setter
    def state(self, state: ThinkingState) -> None:
        self.unfolded.clear()
        self.folded = state

    def fold(self, event: Event) -> None:
        self.unfolded.append(event)
        self.events.append(event)

    def update(self) -> RunUpdate:
        return RunUpdate(
            run_id=self.run_id, session_id=self.session_id,
            user_message_id=self.turn.user.id, message_id=self.message_id,
            status=self.status, state=self.state, position=self.position, pause=self.pause,
            error=self.error, model_id=self.turn.assistant.model_id,
            skill_folder=self.turn.assistant.skill_folder, summary_ids=self.summary_ids,
        )
