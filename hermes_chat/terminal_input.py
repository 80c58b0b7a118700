"""Lines typed in the terminal, and Ctrl-C, for an asyncio program.

A read can be abandoned (Ctrl-C at a prompt leaves it: nothing hangs on a thread blocked in
`readline`), and Ctrl-C interrupts whatever the conversation is waiting for instead of killing
the process, so the chat can ask what to do with a run still going.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import termios
from collections.abc import Awaitable, Iterator
from typing import TypeVar

T = TypeVar("T")
EOF = ""  # what a read gives at the end of input (Ctrl-D)


class Interrupted(Exception):
    """Ctrl-C was pressed while the conversation waited for something."""


class LineReader:
    """Lines of a file descriptor (the terminal: one line per Enter); `EOF` at its end."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = b""
        self._ended = False

    async def read_line(self) -> str:
        while b"\n" not in self._buffer and not self._ended:
            chunk = await self._chunk()
            self._ended = not chunk
            self._buffer += chunk
        line, newline, self._buffer = self._buffer.partition(b"\n")
        return (line + newline).decode("utf-8", errors="replace")

    def discard_typeahead(self) -> None:
        """Forget lines typed (or pasted) before a question was asked: an answer is typed
        after it, never taken from a paste meant as messages."""
        self._buffer = b""
        if os.isatty(self.fd):
            termios.tcflush(self.fd, termios.TCIFLUSH)

    async def _chunk(self) -> bytes:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        try:
            loop.add_reader(self.fd, _wake, ready)
        except PermissionError:  # a regular file: reading never blocks
            return os.read(self.fd, 65536)
        try:
            await ready
        finally:
            loop.remove_reader(self.fd)
        return os.read(self.fd, 65536)


def _wake(ready: asyncio.Future[None]) -> None:
    if not ready.done():
        ready.set_result(None)


class Interrupts:
    """Ctrl-C (SIGINT) cancels what `guard` awaits, which then raises Interrupted; pressed
    while nothing is guarded, it interrupts the next guarded wait at once."""

    def __init__(self) -> None:
        self._current: asyncio.Future[object] | None = None
        self._pressed = False

    @contextlib.contextmanager
    def installed(self) -> Iterator[Interrupts]:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, self.press)
        try:
            yield self
        finally:
            loop.remove_signal_handler(signal.SIGINT)

    def press(self) -> None:
        self._pressed = True
        if self._current is not None:
            self._current.cancel()

    async def guard(self, awaitable: Awaitable[T]) -> T:
        task = asyncio.ensure_future(awaitable)
        if self._pressed:
            task.cancel()
        self._current = task  # type: ignore[assignment]  # any future is cancelled alike
        try:
            return await task
        except asyncio.CancelledError:
            if not self._pressed:
                raise  # cancelled from outside: not ours to turn into Interrupted
            raise Interrupted() from None
        finally:
            self._current = None
            self._pressed = False
