"""What subscribers receive: the latest view of a run, and the subscriptions that carry it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Protocol

from core.agent.thinking import ThinkingState
from core.store.models import ENDED, MessageStatus, PauseKind, PauseStatus


@dataclass(frozen=True, slots=True)
class PauseView:
    """A clarify question, or a tool approval (`kind` "approval": `question` is its command,
    `answer` the decision), as the chat shows it (with who answered, once answered)."""

    pause_id: int
    clarify_id: str
    question: str
    choices: tuple[str, ...]
    status: PauseStatus
    answer: str | None = None
    answered_by: str | None = None
    kind: PauseKind = PauseKind.CLARIFY
    tool: str | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class RunUpdate:
    """The whole current view of one run; a newer update replaces an older one."""

    run_id: str
    session_id: int
    user_message_id: int
    message_id: int
    status: MessageStatus
    state: ThinkingState
    position: int | None = None  # place in the global queue while QUEUED
    pause: PauseView | None = None  # the latest clarify question
    approval: PauseView | None = None  # the latest tool approval (kind approval)
    error: str | None = None
    model_id: str | None = None
    skill_folder: str | None = None
    summary_ids: tuple[int, ...] = ()  # SYSTEM summaries this run added (compaction dividers)
    in_line: bool = False  # queued behind a run of its own thread (a busy thread's `queue`)

    @property
    def finished(self) -> bool:
        return self.status in ENDED

    def update(self) -> RunUpdate:
        return self  # a fixed update is its own view


class Viewable(Protocol):
    """Something whose current view is a RunUpdate (a live run, or a fixed update)."""

    run_id: str

    def update(self) -> RunUpdate: ...


@dataclass(eq=False)
class Subscription:
    """Bounded and latest-state-wins: one pending update per run, whatever the reader's pace.

    Publishing never waits, so a reader that stalls never slows a run, and its memory is
    one update per run at most.
    """

    run_id: str | None = None  # None: every run
    _pending: dict[str, Viewable] = field(default_factory=dict)
    _ready: asyncio.Event = field(default_factory=asyncio.Event)
    closed: bool = False

    def offer(self, source: Viewable) -> None:
        """Mark a run changed; its view is built when the reader gets to it (latest wins)."""
        if self.run_id is None or source.run_id == self.run_id:
            self._pending.pop(source.run_id, None)  # re-insert: order by latest change
            self._pending[source.run_id] = source
            self._ready.set()

    async def next(self) -> list[RunUpdate]:
        """Wait for at least one update; return the latest of each changed run."""
        while not self._pending and not self.closed:
            self._ready.clear()
            await self._ready.wait()
        batch, self._pending = list(self._pending.values()), {}
        return [source.update() for source in batch]

    async def __aiter__(self) -> AsyncIterator[RunUpdate]:
        while not self.closed:
            for update in await self.next():
                yield update
                if self.run_id is not None and update.finished:
                    return

    def close(self) -> None:
        self.closed = True
        self._ready.set()


class Hub:
    """Fan-out of run updates to every subscription."""

    def __init__(self) -> None:
        self._subscriptions: set[Subscription] = set()

    def subscribe(self, run_id: str | None = None) -> Subscription:
        subscription = Subscription(run_id)
        self._subscriptions.add(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        subscription.close()
        self._subscriptions.discard(subscription)

    def publish(self, source: Viewable) -> None:
        for subscription in list(self._subscriptions):
            subscription.offer(source)
