"""A service inside the network (another 127.0.0.1 port) that a file URL or a redirect may
point at: it records each request it gets, so a test proves that none came."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from aiohttp import web


@contextlib.asynccontextmanager
async def inside_service() -> AsyncIterator[tuple[str, list[str]]]:
    """Its base URL, and the paths asked of it (every path answers "internal secret")."""
    hits: list[str] = []

    async def secret(request: web.Request) -> web.Response:
        hits.append(request.path)
        return web.Response(text="internal secret")

    app = web.Application()
    app.router.add_get("/{name:.*}", secret)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}", hits
    finally:
        await runner.cleanup()
