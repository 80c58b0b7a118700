"""A fault-injecting Hermes Bridge on a random 127.0.0.1 port, speaking docs/bridge-protocol.md.

Each run plays a script: events (`ev("text", text="hi")`, ids 1, 2, ... in script order, or from
the `resume.first_event_id` of a continued turn) and
one-shot fault markers placed between them:

- `Drop()` / `Drop(abrupt=True)`: end the response cleanly / cut the TCP connection here;
- `Repeat(n)`: send again the last n events already sent;
- `Raw(text)`: write raw SSE text (bad JSON, unknown event names, missing ids...);
- `Comments(n)`: n heartbeat comment lines at once;
- `Stall(name, heartbeat=None)`: hold the connection (silent, or a comment every
  `heartbeat` s) until `release(name)`, an abort, or the client going away;
- `WaitAnswer(clarify_id)`: hold (with heartbeats) until that clarify is answered (or that
  approval decided).

A marker fires once, on whichever connection reaches it first; a reconnect with
`Last-Event-ID: N` replays the events after N and goes on from there. `fail(route, status)`
makes the next call(s) of a route answer an error, `hold(route)` keeps them waiting until the
returned event is set (a slow Bridge); `stop()` / `start()` take the whole Bridge
down and up again on the same port. Every request is recorded in `requests`, with its size;
a body over the real Bridge's limit is refused as it is there.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.changes import CHANGES

EventItem = tuple[str, dict[str, Any]]
MAX_REQUEST_BYTES = 512 * 1024 * 1024  # the body limit of the real Bridge (bridge/app.py)


def ev(name: str, **data: Any) -> EventItem:
    """A scripted event."""
    return (name, data)


@dataclass(frozen=True)
class Drop:
    abrupt: bool = False


@dataclass(frozen=True)
class Repeat:
    count: int


@dataclass(frozen=True)
class Raw:
    text: str


@dataclass(frozen=True)
class Comments:
    count: int = 3


@dataclass(frozen=True)
class Stall:
    name: str = "stall"
    heartbeat: float | None = None


@dataclass(frozen=True)
class WaitAnswer:
    clarify_id: str
    heartbeat: float | None = None


Item = EventItem | Drop | Repeat | Raw | Comments | Stall | WaitAnswer


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    raw_path: str
    headers: dict[str, str]
    body: Any
    size: int = 0  # bytes of the body as it came


@dataclass
class FakeRun:
    run_id: str
    session_id: str
    items: list[Item]
    fired: set[int] = field(default_factory=set)
    sent_high: int = 0
    aborted: bool = False
    answers: dict[str, str] = field(default_factory=dict)
    steers: list[str] = field(default_factory=list)  # guidance given while it ran (POST steer)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    first_id: int = 1  # a resumed run's ids continue from `resume.first_event_id`
    _numbered: list[tuple[int, int, EventItem]] | None = None
    _by_index: dict[int, tuple[int, EventItem]] | None = None

    def numbered(self) -> list[tuple[int, int, EventItem]]:
        """(index in items, event id, event) of every scripted event (cached: scripts are long)."""
        if self._numbered is None:
            events = [(i, item) for i, item in enumerate(self.items) if isinstance(item, tuple)]
            self._numbered = [(i, n, item)
                              for n, (i, item) in enumerate(events, start=self.first_id)]
        return self._numbered

    def event_at(self, index: int) -> tuple[int, EventItem]:
        """(event id, event) of the scripted event at `index` of items."""
        if self._by_index is None:
            self._by_index = {i: (n, item) for i, n, item in self.numbered()}
        return self._by_index[index]

    def bump(self) -> None:
        """Wake every connection waiting on this run."""
        self.changed.set()
        self.changed = asyncio.Event()

    def clarifies(self) -> dict[str, EventItem]:
        return {
            item[1]["clarify_id"]: item for _, _, item in self.numbered()
            if item[0] == "clarify_request"
        }

    def state(self) -> str:
        sent = [item for _, n, item in self.numbered() if n <= self.sent_high]
        if sent and sent[-1][0] in ("done", "error"):
            return sent[-1][0]
        asked = [item[1]["clarify_id"] for item in sent if item[0] == "clarify_request"]
        return "waiting_clarify" if asked and asked[-1] not in self.answers else "running"

    def abort(self) -> None:
        """Cut the script after the last event sent and end it with an `aborted` error."""
        sent = [i for i, n, _ in self.numbered() if n <= self.sent_high]
        cut = sent[-1] + 1 if sent else 0
        self.items[cut:] = [ev("error", message="aborted by the user", code="aborted")]
        self._numbered = self._by_index = None
        self.aborted = True
        self.bump()


class FakeBridge:
    """The fake; `async with FakeBridge() as bridge:` or `await start()` / `await stop()`."""

    def __init__(self, heartbeat: float = 15.0) -> None:
        self.heartbeat = heartbeat
        self.port = 0
        self.runs: dict[str, FakeRun] = {}
        self.scripts: dict[str, list[Item]] = {}
        self.default_script: Callable[[str], list[Item]] = lambda run_id: [
            ev("done", final_text=f"done {run_id}")
        ]
        self.requests: list[Recorded] = []
        self.comments_sent = 0
        self.released: set[str] = set()
        self.memory: dict[str, dict[str, str]] = {}
        self.agents: set[str] = set()
        self._failures: dict[str, list[tuple[int, str]]] = {}
        self._holds: dict[str, asyncio.Event] = {}
        self._streams: set[asyncio.Task[Any]] = set()
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # --- control ------------------------------------------------------------------------

    def script(self, run_id: str, items: list[Item]) -> None:
        """What `POST /run` of `run_id` will play."""
        self.scripts[run_id] = list(items)

    def add_run(self, run_id: str, items: list[Item], session_id: str = "chat-x") -> FakeRun:
        """A run the Bridge already knows (as if started before a client restart)."""
        run = FakeRun(run_id, session_id, list(items))
        self.runs[run_id] = run
        return run

    def fail(self, route: str, status: int, times: int = 1, code: str = "boom") -> None:
        """The next `times` calls of `route` (run, events, state, abort, answer, reset,
        memory, health) answer `status` with an error body."""
        self._failures.setdefault(route, []).extend([(status, code)] * times)

    def hold(self, route: str) -> asyncio.Event:
        """Calls of `route` (as for `fail`) wait until the returned event is set."""
        gate = self._holds[route] = asyncio.Event()
        return gate

    def release(self, stall: str) -> None:
        """Let connections held by `Stall(stall)` go on."""
        self.released.add(stall)
        for run in self.runs.values():
            run.bump()

    def requests_to(self, method: str, prefix: str) -> list[Recorded]:
        return [r for r in self.requests if r.method == method and r.path.startswith(prefix)]

    async def start(self) -> None:
        runner = web.AppRunner(self._app(), handler_cancellation=True, shutdown_timeout=0.5)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", self.port, reuse_address=True)
        await site.start()
        self._runner = runner
        self.port = runner.addresses[0][1]

    async def stop(self) -> None:
        """Take the Bridge down; open streams are cut. Runs are kept for `start()`."""
        for task in list(self._streams):
            task.cancel()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeBridge:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # --- HTTP ---------------------------------------------------------------------------

    def _app(self) -> web.Application:
        app = web.Application(middlewares=[self._record], client_max_size=MAX_REQUEST_BYTES)
        app.router.add_post("/run", self._post_run)
        app.router.add_get("/runs/{run_id}/events", self._get_events)
        app.router.add_get("/runs/{run_id}", self._get_run)
        app.router.add_post("/runs/{run_id}/abort", self._abort)
        app.router.add_post("/runs/{run_id}/steer", self._steer)
        app.router.add_post("/clarify/{clarify_id}/answer", self._answer)
        app.router.add_post("/runs/{run_id}/approval", self._approve)
        app.router.add_post("/sessions/{session_id}/reset", self._reset)
        app.router.add_get("/sessions/{session_id}/memory", self._get_memory)
        app.router.add_post("/sessions/{session_id}/memory", self._set_memory)
        app.router.add_get("/health", self._health)
        return app

    @web.middleware
    async def _record(self, request: web.Request, handler: Any) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        self.requests.append(Recorded(
            request.method, request.path, request.raw_path, dict(request.headers), body, len(raw)
        ))
        CHANGES.notify()
        try:
            failure = self._take_failure(request.path)
            if failure is not None:
                return failure
            gate = self._holds.get(_route_of(request.path))
            if gate is not None:
                await gate.wait()
            return await handler(request)
        finally:
            CHANGES.notify()

    def _take_failure(self, path: str) -> web.Response | None:
        route = _route_of(path)
        queue = self._failures.get(route) or []
        if not queue:
            return None
        status, code = queue.pop(0)
        return _error(status, code, f"injected {status} on {route}")

    async def _post_run(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except ValueError:
            body = None
        if not isinstance(body, dict) or not body.get("run_id") or not body.get("user_message"):
            return _error(400, "invalid_request", "run_id and user_message are required")
        run_id = body["run_id"]
        if run_id in self.runs:
            return _error(409, "run_exists", f"run {run_id} already exists")
        items = self.scripts.get(run_id) or self.default_script(run_id)
        first = int((body.get("resume") or {}).get("first_event_id") or 1)
        self.runs[run_id] = FakeRun(run_id, body.get("session_id", ""), list(items), first_id=first)
        self.agents.add(body.get("session_id", ""))
        return await self._play(request, self.runs[run_id], first - 1)

    async def _get_events(self, request: web.Request) -> web.StreamResponse:
        run = self.runs.get(request.match_info["run_id"])
        if run is None:
            return _error(404, "run_not_found", "no such run")
        last = request.headers.get("Last-Event-ID", "0")
        return await self._play(request, run, int(last) if last.isdigit() else 0)

    async def _play(self, request: web.Request, run: FakeRun, after: int) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        task = asyncio.current_task()
        assert task is not None
        self._streams.add(task)
        try:
            await _Player(self, run, request, response).play(after)
        finally:
            self._streams.discard(task)
        return response

    async def _get_run(self, request: web.Request) -> web.Response:
        run = self.runs.get(request.match_info["run_id"])
        if run is None:
            return web.json_response({
                "run_id": request.match_info["run_id"], "session_id": None,
                "state": "unknown", "last_event_id": 0, "pending_clarify": None,
            })
        pending = None
        if run.state() == "waiting_clarify":
            asked = [item[1] for _, n, item in run.numbered()
                     if n <= run.sent_high and item[0] == "clarify_request"]
            pending = asked[-1]
        return web.json_response({
            "run_id": run.run_id, "session_id": run.session_id, "state": run.state(),
            "last_event_id": run.sent_high, "pending_clarify": pending,
        })

    async def _abort(self, request: web.Request) -> web.Response:
        run = self.runs.get(request.match_info["run_id"])
        if run is None:
            return _error(404, "run_not_found", "no such run")
        if run.state() in ("done", "error") or run.aborted:
            return _error(409, "run_finished", "the run has already finished")
        run.abort()
        return web.json_response({"run_id": run.run_id, "state": "error"})

    async def _steer(self, request: web.Request) -> web.Response:
        run = self.runs.get(request.match_info["run_id"])
        if run is None:
            return _error(404, "run_not_found", "no such run")
        if run.state() in ("done", "error") or run.aborted:
            return _error(409, "run_finished", "the run has already finished")
        run.steers.append((await request.json())["text"])
        return web.json_response({"run_id": run.run_id, "accepted": True})

    async def _answer(self, request: web.Request) -> web.Response:
        clarify_id = request.match_info["clarify_id"]
        body = await request.json()
        run = next((r for r in self.runs.values() if clarify_id in r.clarifies()), None)
        if run is None:
            return _error(404, "clarify_not_found", "no such clarify")
        if clarify_id in run.answers:
            return _error(409, "clarify_answered", "this question was already answered")
        run.answers[clarify_id] = body["answer"]
        run.bump()
        return web.json_response({"clarify_id": clarify_id, "run_id": run.run_id})

    async def _approve(self, request: web.Request) -> web.Response:
        """A decision on a run's `approval_request`; recorded in `answers` like a clarify's
        answer, so `WaitAnswer(approval_id)` holds until it."""
        run = self.runs.get(request.match_info["run_id"])
        approval_id = (await request.json())["approval_id"]
        if run is None or not any(item[0] == "approval_request"
                                  and item[1]["approval_id"] == approval_id
                                  for _, _, item in run.numbered()):
            return _error(404, "approval_not_found", "no such approval")
        if approval_id in run.answers:
            return _error(409, "approval_decided", "this approval was already decided")
        run.answers[approval_id] = (await request.json())["decision"]
        run.bump()
        return web.json_response({"approval_id": approval_id, "run_id": run.run_id})

    async def _reset(self, request: web.Request) -> web.Response:
        session_id = request.match_info["session_id"]
        dropped = session_id in self.agents
        self.agents.discard(session_id)
        return web.json_response({"session_id": session_id, "dropped": dropped})

    async def _get_memory(self, request: web.Request) -> web.Response:
        session_id = request.match_info["session_id"]
        stored = self.memory.get(session_id, {"memory": "", "user": ""})
        return web.json_response({"session_id": session_id, **stored})

    async def _set_memory(self, request: web.Request) -> web.Response:
        session_id = request.match_info["session_id"]
        body = await request.json()
        stored = self.memory.setdefault(session_id, {"memory": "", "user": ""})
        stored.update({k: body[k] for k in ("memory", "user") if k in body})
        return web.json_response({"session_id": session_id, **stored})

    async def _health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok", "runs": len(self.runs), "agents": len(self.agents)})


class _Player:
    """Plays one connection of a run's script, firing the markers it reaches."""

    def __init__(
        self, fake: FakeBridge, run: FakeRun, request: web.Request, response: web.StreamResponse
    ) -> None:
        self.fake, self.run, self.request, self.response = fake, run, request, response

    async def play(self, after: int) -> None:
        index = self._start_index(after)
        while index < len(self.run.items):
            item = self.run.items[index]
            if isinstance(item, tuple):
                await self._send_event(index)
                if item[0] in ("done", "error"):
                    return
            elif index not in self.run.fired:
                self.run.fired.add(index)
                if await self._fire(item) == "stop":
                    return
            index += 1

    def _start_index(self, after: int) -> int:
        for i, n, _ in self.run.numbered():
            if n == after:
                return i + 1
        return 0

    async def _send_event(self, index: int) -> None:
        n, (name, data) = self.run.event_at(index)
        await self._write(f"id: {n}\nevent: {name}\ndata: {json.dumps(data)}\n\n")
        self.run.sent_high = max(self.run.sent_high, n)
        CHANGES.notify()

    async def _fire(self, item: Item) -> str | None:
        if isinstance(item, Drop):
            if item.abrupt:
                assert self.request.transport is not None
                self.request.transport.abort()
            return "stop"
        if isinstance(item, Repeat):
            sent = [(n, e) for _, n, e in self.run.numbered() if n <= self.run.sent_high]
            for n, (name, data) in sent[-item.count:]:
                await self._write(f"id: {n}\nevent: {name}\ndata: {json.dumps(data)}\n\n")
        elif isinstance(item, Raw):
            await self._write(item.text)
        elif isinstance(item, Comments):
            for _ in range(item.count):
                await self._comment()
        elif isinstance(item, Stall):
            name = item.name
            await self._hold(lambda: name in self.fake.released, item.heartbeat)
        elif isinstance(item, WaitAnswer):
            cid = item.clarify_id
            await self._hold(lambda: cid in self.run.answers, item.heartbeat or self.fake.heartbeat)
        return None

    async def _hold(self, done: Callable[[], bool], heartbeat: float | None) -> None:
        while not (done() or self.run.aborted):
            changed = self.run.changed
            try:
                await asyncio.wait_for(changed.wait(), heartbeat)
            except TimeoutError:
                await self._comment()

    async def _comment(self) -> None:
        await self._write(": keep-alive\n\n")
        self.fake.comments_sent += 1

    async def _write(self, text: str) -> None:
        await self.response.write(text.encode())


def _route_of(path: str) -> str:
    parts = path.strip("/").split("/")
    if parts[0] == "runs":
        return "state" if len(parts) == 2 else parts[2]
    if parts[0] in ("clarify", "sessions"):
        return parts[-1]
    return parts[0]


def _error(status: int, code: str, message: str) -> web.Response:
    return web.json_response({"code": code, "message": message}, status=status)
