"""Run a blocking call on its own daemon thread and await it from the event loop.

Not the default executor: a turn may block for hours on a clarify, and a bounded pool
would let such turns starve everybody else.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def run_in_thread(fn: Callable[[], T], name: str) -> asyncio.Future[T]:
    """Start `fn` on a new daemon thread; the future resolves on the calling loop."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if future.done():
            return  # the awaiting task was cancelled (shutdown)
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]

    def target() -> None:
        try:
            result = fn()
        except BaseException as error:  # handed to the awaiting task, not swallowed
            outcome: tuple[T | None, BaseException | None] = (None, error)
        else:
            outcome = (result, None)
        if not loop.is_closed():
            loop.call_soon_threadsafe(settle, *outcome)

    threading.Thread(target=target, name=name, daemon=True).start()
    return future
