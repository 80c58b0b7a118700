"""The in-memory side of one run: its nodes, its folded state, and its update."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace

import msgspec

from core.agent.events import Event, TextDelta
from core.agent.thinking import ThinkingState, fold
from core.runtime.records import Turn
from core.runtime.updates import PauseView, RunUpdate
from core.store.models import MessageStatus, PauseKind, PauseStatus
from core.usage.spenders import Spender


@dataclass(eq=False)
class LiveRun:
    """One run this process drives; `update` is what subscribers see."""

    run_id: str
    turn: Turn
    status: MessageStatus
    folded: ThinkingState = field(default_factory=ThinkingState)
    position: int | None = None
    announced_position: int | None = None  # the queue position subscribers were last woken for
    pause: PauseView | None = None  # the latest clarify question
    pauses_reread: set[int] = field(default_factory=set)  # read again once the run went on
    approval: PauseView | None = None  # the latest tool approval
    error: str | None = None
    summary_ids: tuple[int, ...] = ()
    history_ids: tuple[int, ...] = ()
    task: asyncio.Task[None] | None = None
    waits_for: asyncio.Future[None] | None = None  # the run it is queued behind, in its session
    finished_at: float | None = None
    events: list[Event] = field(default_factory=list)  # what admin SSE followers replay
    # Followers replay events up to this seq only: each one's step is done (a question is
    # stored before anyone can answer it, an answer is written before its `done` is seen).
    shown_seq: int = 0
    event_bytes: int = 0  # about what `events` costs (RUN_BUFFER_BYTES bounds it)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    dirty: bool = False  # an announcement to subscribers is already scheduled
    checkpoint_seq: int = 0  # the seq of the latest checkpoint received (or stored)
    answered: asyncio.Event = field(default_factory=asyncio.Event)  # a continuation waits on it
    spender: Spender | None = None  # who its model calls count against, once read
    limit_stop: str | None = None  # the spend limit it was aborted at (what people are told)

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
        self.event_bytes += event_size(event)

    def trim_events(self, stored_seq: int, max_bytes: int) -> None:
        """Past `max_bytes`, forget the oldest events down to 3/4 of it, but only those stored
        (seq <= `stored_seq`): followers read those from the database (core/runtime/follow.py)."""
        if self.event_bytes <= max_bytes:
            return
        goal, cut = max_bytes * 3 // 4, 0
        while (cut < len(self.events) and self.event_bytes > goal
               and self.events[cut].seq <= stored_seq):
            self.event_bytes -= event_size(self.events[cut])
            cut += 1
        del self.events[:cut]

    def show(self, pause: PauseView) -> bool:
        """Hold `pause` as the run's clarify or approval; False if it already was that one."""
        held = self.approval if pause.kind == PauseKind.APPROVAL else self.pause
        if held == pause:
            return False
        if pause.kind == PauseKind.APPROVAL:
            self.approval = pause
        else:
            self.pause = pause
        return True

    def unanswered_pauses(self) -> list[PauseView]:
        """The clarify question and tool approval held here as still waiting for an answer."""
        return [held for held in (self.pause, self.approval)
                if held is not None and held.status == PauseStatus.UNANSWERED]

    def expire_pauses(self) -> bool:
        """Mark the unanswered clarify and approval expired; True if one was."""
        changed = False
        for name in ("pause", "approval"):
            held: PauseView | None = getattr(self, name)
            if held is not None and held.status == PauseStatus.UNANSWERED:
                setattr(self, name, replace(held, status=PauseStatus.EXPIRED))
                changed = True
        return changed

    def update(self) -> RunUpdate:
        return RunUpdate(
            run_id=self.run_id, session_id=self.session_id,
            user_message_id=self.turn.user.id, message_id=self.message_id,
            status=self.status, state=self.state, position=self.position, pause=self.pause,
            approval=self.approval, error=self.error, model_id=self.turn.assistant.model_id,
            skill_folder=self.turn.assistant.skill_folder, summary_ids=self.summary_ids,
            in_line=self.status == MessageStatus.QUEUED and self.waits_for is not None
            and not self.waits_for.done(),
        )


def event_size(event: Event) -> int:
    """About the bytes an event holds: its text, or its JSON (most events are small)."""
    if type(event) is TextDelta:
        return len(event.text) + 64
    return len(msgspec.json.encode(event)) + 64
