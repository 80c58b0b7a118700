"""The admin app served for real: uvicorn in this process on a random 127.0.0.1 port."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager

import uvicorn
from litestar import Litestar

from tests.fakes.changes import WAIT
from tests.serving import KEEP_ALIVE


class _Server(uvicorn.Server):
    """Leaves the test process's signal handlers alone."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@asynccontextmanager
async def serving(app: Litestar) -> AsyncIterator[str]:
    """Serve `app` until the block exits; yields its base URL.

    uvicorn binds port 0 itself: a socket made by hand without IPPROTO_TCP would not get
    TCP_NODELAY from asyncio, and every keep-alive request would wait ~40 ms for a delayed ACK.
    """
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, lifespan="on", log_config=None, timeout_graceful_shutdown=1,
        timeout_keep_alive=KEEP_ALIVE,
    )
    server = _Server(config)
    task = asyncio.create_task(server.serve())
    try:
        await poll_until(lambda: _started(server, task))
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, WAIT)


async def _started(server: uvicorn.Server, task: asyncio.Task[None]) -> bool:
    if task.done():
        task.result()  # a server that died on start-up fails the test with its error
    return server.started


async def poll_until(check: Callable[[], Awaitable[bool]], deadline: float = WAIT) -> None:
    """Await `check()` until true; fails after `deadline` seconds."""
    end = time.monotonic() + deadline
    while not await check():
        if time.monotonic() > end:
            raise AssertionError(f"not true within {deadline} s")
        await asyncio.sleep(0.01)  # yield to the server between polls, not waiting for time
