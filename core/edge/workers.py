"""Worker processes for CPU-heavy work on untrusted input (a PDF's text, a large file's
decoding), so that the event loop never waits on it.

A process, not a thread: pypdf is pure Python, and a thread would hold the GIL the loop needs.
Each job runs within a time cap from the moment a worker takes it; a job past its cap has its
worker process killed and replaced (pebble's `ProcessPool`), so a stuck parse keeps no core
busy; workers run at a lower priority (nice 10), so the conversations beside a long parse keep
their share of the CPU. A worker imports the `preload` modules as it starts, so a job's time
counts its work, not the import of the library doing it. Workers are started with `spawn` (a
fork of a process running asyncio and threads could copy a held lock) at the first job, and
stopped by `close()`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import concurrent.futures.process
import multiprocessing
import os
from collections.abc import Callable
from typing import Any, TypeVar

from pebble import ProcessExpired, ProcessPool

T = TypeVar("T")
DEFAULT_WORKERS = max(1, min(2, (os.cpu_count() or 1) - 1))
WORKER_NICENESS = 10  # a file being read yields the CPU to the conversations


class JobTimedOut(Exception):
    """The job ran past its time cap: its worker was stopped."""


class JobFailed(Exception):
    """The job could not finish: its worker died (out of memory, a crash) or the pool closed."""


class WorkerPool:
    """`run(fn, *args, seconds=...)`: `fn(*args)` in a worker process, within `seconds`.
    `fn` and its arguments must be picklable (a module-level function, plain values)."""

    def __init__(self, workers: int = DEFAULT_WORKERS, preload: tuple[str, ...] = ()) -> None:
        self._workers = workers
        self._preload = preload
        self._pool: ProcessPool | None = None
        self._pending: set[concurrent.futures.Future[Any]] = set()
        self._closed = False

    async def run(self, fn: Callable[..., T], *args: Any, seconds: float) -> T:
        """`fn(*args)`'s result; its exception as raised there; JobTimedOut past `seconds`
        (counted from the start of the job, not from its wait for a free worker); JobFailed
        if its worker died or the pool closed meanwhile."""
        future = self._started().schedule(fn, args, timeout=seconds)
        self._pending.add(future)
        try:
            return await asyncio.wrap_future(future)  # a cancelled caller stops the job too
        except concurrent.futures.TimeoutError:
            raise JobTimedOut(f"past {seconds:g} s") from None
        except (ProcessExpired, concurrent.futures.process.BrokenProcessPool) as error:
            raise JobFailed(f"the worker died: {error}") from None
        finally:
            self._pending.discard(future)

    def _started(self) -> ProcessPool:
        if self._closed:
            raise JobFailed("the worker pool is closed")
        if self._pool is not None and not self._pool.active:  # broken: its threads end
            self._pool.stop()
            self._pool = None
        if self._pool is None:
            self._pool = ProcessPool(max_workers=self._workers, initializer=_worker_started,
                                     initargs=(WORKER_NICENESS, self._preload),
                                     context=multiprocessing.get_context("spawn"))
        return self._pool

    async def close(self) -> None:
        """Stop every worker (a job still running is killed; its caller gets JobFailed).
        Waits on a thread, so the loop goes on meanwhile; calling it twice is harmless."""
        self._closed = True
        pool, self._pool = self._pool, None
        if pool is None:
            return
        pool.stop()
        await asyncio.to_thread(pool.join)
        for future in list(self._pending):
            if not future.done():
                future.set_exception(JobFailed("the worker pool closed"))

    async def __aenter__(self) -> WorkerPool:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()


def _worker_started(niceness: int, preload: tuple[str, ...]) -> None:
    os.nice(niceness)
    for module in preload:
        importlib.import_module(module)
