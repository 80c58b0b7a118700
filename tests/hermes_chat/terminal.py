"""A program in a pseudo-terminal, driven as a person would: read what it shows, type lines,
press Ctrl-C and Ctrl-D. The program's session has the terminal as its controlling terminal, so
Ctrl-C is a real SIGINT from the terminal's line discipline, not a signal the test sends."""

from __future__ import annotations

import asyncio
import os
import pty
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from tests.fakes.changes import WAIT

# Runs in the child before the program: a session of its own, the terminal as its controller.
TAKE_TERMINAL = ("import fcntl, os, sys, termios; os.setsid(); "
                 "fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
                 "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])")


class Terminal:
    """`python <args>` on a pseudo-terminal; everything it wrote is in `output`."""

    def __init__(self, process: subprocess.Popen[bytes], master: int) -> None:
        self.process = process
        self.master = master
        self.output = ""
        self.seen = 0  # where the next `expect` starts looking
        self._changed = asyncio.Event()
        self._closed = asyncio.Event()  # the program's side of the terminal is closed
        asyncio.get_running_loop().add_reader(master, self._read)

    @classmethod
    def start(cls, args: Sequence[str], cwd: Path, env: Mapping[str, str]) -> Terminal:
        master, slave = pty.openpty()
        process = subprocess.Popen([sys.executable, "-c", TAKE_TERMINAL, *args], cwd=cwd,
                                   env=dict(env), stdin=slave, stdout=slave, stderr=slave)
        os.close(slave)
        return cls(process, master)

    def _read(self) -> None:
        try:
            chunk = os.read(self.master, 65536)
        except OSError:  # EIO: the program closed the terminal (it exited)
            chunk = b""
        if not chunk:
            asyncio.get_running_loop().remove_reader(self.master)
            self._closed.set()
        self.output += chunk.decode("utf-8", errors="replace").replace("\r\n", "\n")
        self._changed.set()

    async def expect(self, text: str, deadline: float = WAIT) -> str:
        """Wait until `text` shows after what was expected last; what came before it."""
        try:
            async with asyncio.timeout(deadline):
                while (found := self.output.find(text, self.seen)) < 0:
                    self._changed.clear()
                    await self._changed.wait()
        except TimeoutError:
            raise AssertionError(f"never showed {text!r}; the terminal shows:\n"
                                 f"{self.output[-3000:]}") from None
        before, self.seen = self.output[self.seen:found], found + len(text)
        return before

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\n")

    def ctrl_c(self) -> None:
        os.write(self.master, b"\x03")

    def ctrl_d(self) -> None:
        os.write(self.master, b"\x04")

    async def exit_code(self, deadline: float = WAIT) -> int:
        code = await asyncio.wait_for(asyncio.to_thread(self.process.wait), deadline)
        await self.drained()
        return code

    async def drained(self) -> None:
        """Everything the program wrote before it exited is in `output`."""
        await asyncio.wait_for(self._closed.wait(), WAIT)

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        try:
            asyncio.get_running_loop().remove_reader(self.master)
        finally:
            os.close(self.master)
