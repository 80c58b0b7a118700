"""A minimal Bridge for benchmarks: answers `POST /run` with N pre-rendered events at full speed,
so what is measured is the consumer, not the server (the agent and the test fakes are slower)."""

from __future__ import annotations

import json

from aiohttp import web


def render(count: int) -> bytes:
    """`count` text events and a `done`, as SSE bytes with ids 1..count+1."""
    lines = [f"id: {i}\nevent: text\ndata: {json.dumps({'text': f'token{i} '})}\n\n"
             for i in range(1, count + 1)]
    lines.append(f"id: {count + 1}\nevent: done\ndata: {json.dumps({'final_text': 'end'})}\n\n")
    return "".join(lines).encode()


class LoopbackBridge:
    """`async with LoopbackBridge(count) as bridge:` then `bridge.url`."""

    def __init__(self, count: int) -> None:
        self.body = render(count)
        self.count = count
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def __aenter__(self) -> LoopbackBridge:
        app = web.Application()
        app.router.add_post("/run", self._run)
        app.router.add_get("/runs/{run_id}", self._state)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _run(self, request: web.Request) -> web.StreamResponse:
        await request.read()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for start in range(0, len(self.body), 65536):
            await response.write(self.body[start : start + 65536])
        await response.write_eof()
        return response

    async def _state(self, request: web.Request) -> web.Response:
        return web.json_response({"run_id": request.match_info["run_id"], "state": "done",
                                  "last_event_id": self.count + 1})
