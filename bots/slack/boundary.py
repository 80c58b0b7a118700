"""The error boundary of every event and interaction, and the tasks that run after the ack.

Work runs after Slack got its acknowledgement (within 3 s), in tasks this object tracks and
cancels on stop. Each task is one boundary: a core refusal becomes a reply, anything else is
logged and replied to, and cancellation goes through.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine, Hashable
from typing import Any

from slack_sdk.errors import SlackApiError

from core.conversation.refusals import INTERNAL, refusal_text
from core.errors import HermesChatError

log = logging.getLogger(__name__)
Reply = Callable[[str], Awaitable[None]]


async def _after(before: asyncio.Task[Any] | None, work: Coroutine[Any, Any, None]) -> None:
    """`work` once `before` (the previous task of the same thread) has ended."""
    try:
        if before is not None:
            await asyncio.wait([before])  # wait() never cancels `before` if we are cancelled
    except asyncio.CancelledError:
        work.close()
        raise
    await work


async def guarded(work: Awaitable[None], reply: Reply, what: str) -> None:
    """Run `work`; tell the user (through `reply`) when it is refused or fails."""
    try:
        await work
    except asyncio.CancelledError:
        raise
    except HermesChatError as error:
        log.info("%s refused: %s", what, error.message)
        await _tell(reply, refusal_text(error), what)
    except Exception:
        log.exception("%s failed", what)
        await _tell(reply, INTERNAL, what)


async def _tell(reply: Reply, text: str, what: str) -> None:
    try:
        await reply(text)
    except asyncio.CancelledError:
        raise
    except (TimeoutError, SlackApiError, OSError) as error:
        log.warning("%s: could not tell the user (%s)", what, error)


class Background:
    """Tasks started after an ack; those of one `queue` (a thread) run one after another, in
    the order Slack delivered them. `close` cancels the ones still running."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self._last: dict[Hashable, asyncio.Task[Any]] = {}

    def spawn(self, work: Coroutine[Any, Any, None], reply: Reply, what: str,
              queue: Hashable | None = None) -> None:
        before = self._last.get(queue) if queue is not None else None
        task = asyncio.create_task(_after(before, guarded(work, reply, what)), name=f"slack:{what}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if queue is not None:
            self._last[queue] = task
            task.add_done_callback(lambda done: self._forget(queue, done))

    def _forget(self, queue: Hashable, task: asyncio.Task[Any]) -> None:
        if self._last.get(queue) is task:
            del self._last[queue]

    async def idle(self) -> None:
        """Until every task started so far (and any they start) has ended."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*list(self._tasks), return_exceptions=True)
