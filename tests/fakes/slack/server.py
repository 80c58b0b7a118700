"""`FakeSlack`: the Web API (and Socket Mode) on a random 127.0.0.1 port."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from aiohttp import web

from tests.fakes.changes import CHANGES, WAIT

from . import api_agents, api_chat, api_files, api_misc, api_stream, api_views
from .calls import Call
from .faults import Fault, FaultBox, Outage
from .limits import Clock, RateLimiter, SlackLimits, system_clock
from .model import Identity, Message, Workspace
from .socket_mode import SocketModeServer
from .state import SlackState, StoredFile
from .wire import ApiError, Args, Body, RateLimited, read_args, take_token

Handler = Callable[[SlackState, Args], Body]
METHODS: dict[str, Handler] = {
    **api_chat.HANDLERS, **api_views.HANDLERS, **api_misc.HANDLERS, **api_files.HANDLERS,
    **api_stream.HANDLERS, **api_agents.HANDLERS,
}
STREAM_METHODS = frozenset(api_stream.HANDLERS)
AGENT_METHODS = frozenset(api_agents.HANDLERS)
_APP_TOKEN_METHODS = frozenset({"apps.connections.open"})


class FakeSlack:
    """`async with FakeSlack() as slack:`; give `slack.api_url` to AsyncWebClient(base_url=)."""

    def __init__(self, *, limits: SlackLimits | None = None, clock: Clock = system_clock,
                 identity: Identity | None = None, bot_token: str | None = None,
                 app_token: str | None = None, port: int = 0) -> None:
        identity = identity or Identity()
        self.state = SlackState(clock=clock, limits=limits or SlackLimits(), identity=identity,
                                workspace=Workspace(identity=identity))
        self.bot_token, self.app_token = bot_token, app_token
        self.calls: list[Call] = []
        self.faults = FaultBox()
        self.refusals: dict[str, str] = {}  # method -> the error it always answers
        self.files_read = True  # False: the bot token lacks files:read (url_private signs in)
        self.socket = SocketModeServer(self.state)
        self._limiter = RateLimiter(self.state.limits, clock)
        self._runner: web.AppRunner | None = None
        self.port = port  # 0: a free one

    # --- lifecycle ----------------------------------------------------------------------

    async def __aenter__(self) -> FakeSlack:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_post("/upload/v1/{upload_id}", self._upload)
        app.router.add_get("/files-pri/{file_id}/{name}", self._download)
        app.router.add_get("/link/", self.socket.handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        self.port = self._runner.addresses[0][1]
        self.state.base_url = f"http://127.0.0.1:{self.port}/"
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.faults.release()
        for outage in self.faults.outages:
            outage.end()
        await self.socket.close_all()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def api_url(self) -> str:
        return f"{self.state.base_url}api/"

    # --- what a test reads --------------------------------------------------------------

    @property
    def workspace(self) -> Workspace:
        return self.state.workspace

    def message(self, channel: str, ts: str) -> Message:
        """The current state of a message (text, blocks, revisions, deleted...)."""
        return self.workspace.messages[(channel, ts)]

    def thread(self, channel: str, thread_ts: str) -> list[Message]:
        return self.workspace.thread(channel, thread_ts)

    def history(self, channel: str) -> list[Message]:
        return self.workspace.history(channel)

    def reactions(self, channel: str, ts: str) -> list[str]:
        """Names of the reactions the bot added to a message."""
        return list(self.workspace.reactions.get((channel, ts), {}))

    def file_content(self, file_id: str) -> bytes | None:
        """The bytes uploaded for a file (None until its upload URL got them)."""
        return self.state.files[file_id].content

    def share_file(self, name: str, content: bytes, mimetype: str = "application/octet-stream",
                   size: int | None = None) -> dict[str, Any]:
        """A file a user shares: its Slack file object (for an event's `files`), served at its
        `url_private` to a request with the bot token, as Slack does (scope files:read)."""
        stored = StoredFile(id=self.state.new_id("F"), filename=name, length=len(content),
                            content=content, mimetype=mimetype)
        self.state.files[stored.id] = stored
        url = f"{self.state.base_url}files-pri/{stored.id}/{name}"
        return {**stored.to_api(self.state.base_url), "mimetype": mimetype,
                "size": len(content) if size is None else size, "url_private": url,
                "url_private_download": f"{url}?download=1", "mode": "hosted"}

    def calls_to(self, method: str) -> list[Call]:
        return [call for call in self.calls if call.method == method]

    @property
    def ratelimited(self) -> int:
        """How many calls were answered 429 (by a limit or an injected fault)."""
        return sum(1 for call in self.calls if call.status == 429)

    async def wait_for_calls(self, method: str, count: int = 1, timeout: float = WAIT,
                             answered: bool = True) -> list[Call]:
        """Until `count` calls of `method` arrived (and were answered, by default)."""
        def done() -> bool:
            calls = self.calls_to(method)
            return len([c for c in calls if c.status or not answered]) >= count

        await CHANGES.until(done, timeout)
        return self.calls_to(method)

    # --- what a test sets up ------------------------------------------------------------

    def new_trigger_id(self) -> str:
        """A trigger_id views.open / views.push accept once, within `trigger_ttl` s."""
        return self.state.new_trigger_id()

    def add_message(self, channel: str, text: str, user: str = "U0USER", **fields: Any) -> Message:
        """A user's message the app may read back (conversations.replies)."""
        return self.workspace.add_message(channel, text=text, user=user, **fields)

    def refuse(self, method: str, error: str = "not_allowed") -> None:
        """From now on `method` answers `{"ok": false, "error": error}` (a workspace or token
        without the feature); `allow(method)` undoes it."""
        self.refusals[method] = error

    def allow(self, method: str) -> None:
        self.refusals.pop(method, None)

    @property
    def streaming(self) -> bool:
        """Whether the stream methods exist; False makes them `unknown_method` (an older
        workspace)."""
        return not STREAM_METHODS & self.refusals.keys()

    @streaming.setter
    def streaming(self, on: bool) -> None:
        self._offer(STREAM_METHODS, on, "unknown_method")

    @property
    def agent(self) -> bool:
        """Whether the app is declared as an agent; False makes agents.sessions.* answer
        `not_authorized` (an app without the agent container)."""
        return not AGENT_METHODS & self.refusals.keys()

    @agent.setter
    def agent(self, on: bool) -> None:
        self._offer(AGENT_METHODS, on, api_agents.NOT_AN_AGENT)

    def _offer(self, methods: frozenset[str], on: bool, error: str) -> None:
        """`methods` work (`on`), or each answers `error`."""
        for method in methods:
            if on:
                self.allow(method)
            else:
                self.refuse(method, error)

    def agent_session(self, channel: str, thread_ts: str) -> dict[str, Any] | None:
        """The thread's agent session (status, title, initiator, history), if it has one."""
        return self.workspace.agent_sessions.get((channel, thread_ts))

    def press_stop(self, channel: str, thread_ts: str, user: str = "U0USER") -> dict[str, Any]:
        """A person presses the native Stop of the thread's agent session: its open streams
        stop, and the `agent_session_stopped` event to deliver is returned."""
        return api_agents.press_stop(self.state, channel, thread_ts, user)

    def expire_stream(self, channel: str, ts: str) -> None:
        """Slack closes an open stream (it timed out): appends and stops are refused."""
        api_stream.expire(self.state, channel, ts)

    def fail(self, method: str, status: int = 500, times: int = 1) -> None:
        """The next `times` calls of `method` ("*" = any) answer HTTP `status`."""
        self.faults.add(method, Fault("status", status=status), times)

    def ratelimit(self, method: str, times: int = 1, retry_after: int = 1) -> None:
        """The next `times` calls of `method` answer 429 `ratelimited`."""
        self.faults.add(method, Fault("ratelimited", retry_after=retry_after), times)

    def hang(self, method: str, times: int = 1) -> None:
        """The next `times` calls of `method` get no answer until `release()`."""
        self.faults.add(method, Fault("hang"), times)

    def release(self, method: str | None = None) -> None:
        self.faults.release(method)

    def outage(self, seconds: float, method: str = "*", status: int = 503,
               hang: bool = False) -> Outage:
        """Slack down for `seconds` of the fake's clock from now: calls of `method` are not
        applied and answer `status` (with `hang`, only once the outage is over)."""
        outage = Outage(method, self.state.clock() + seconds, status, hang)
        self.faults.outages.append(outage)
        return outage

    # --- HTTP ---------------------------------------------------------------------------

    async def _api(self, request: web.Request) -> web.StreamResponse:
        method = request.match_info["method"]
        unreadable: ApiError | None = None
        try:
            args = await read_args(request)
        except ApiError as error:
            args, unreadable = {}, error
        call = Call(method, args, take_token(request, args), self.state.clock())
        self._record(call)
        response = await self._answer(call, unreadable)
        call.status = response.status
        CHANGES.notify()
        return response

    async def _answer(self, call: Call, unreadable: ApiError | None) -> web.Response:
        outage = self.faults.outage_for(call.method, self.state.clock())
        if outage is not None:
            return await self._down(outage)
        fault = self.faults.take(call.method)
        if fault is not None and fault.kind == "hang":
            await fault.released.wait()
        elif fault is not None and fault.kind == "status":
            return web.Response(status=fault.status, text=f"injected {fault.status}",
                                content_type="text/html")
        elif fault is not None:
            return self._ratelimited(call, fault.retry_after)
        try:
            if unreadable is not None:
                raise unreadable
            body = self._dispatch(call)
        except RateLimited as limited:
            return self._ratelimited(call, limited.retry_after)
        except ApiError as error:
            body = error.body()
        return self._json(call, body)

    async def _down(self, outage: Outage) -> web.Response:
        while outage.hang and self.state.clock() < outage.until:
            await asyncio.sleep(0.01)  # the window is on the test's clock: look at it again
        return web.Response(status=outage.status, text=f"injected {outage.status} (outage)",
                            content_type="text/html")

    def _dispatch(self, call: Call) -> Body:
        handler = METHODS.get(call.method)
        if handler is None or self.refusals.get(call.method) == "unknown_method":
            raise ApiError("unknown_method")
        if call.method in self.refusals:
            self._authenticate(call)
            raise ApiError(self.refusals[call.method])
        self._authenticate(call)
        retry_after = self._limiter.admit(call.method, call.args)
        if retry_after is not None:
            raise RateLimited(retry_after)
        return handler(self.state, call.args)

    def _authenticate(self, call: Call) -> None:
        token = call.token
        if not token:
            raise ApiError("not_authed")
        wants_app = call.method in _APP_TOKEN_METHODS
        if token.startswith("xapp-") != wants_app:
            raise ApiError("not_allowed_token_type")
        expected = self.app_token if wants_app else self.bot_token
        prefixes = ("xapp-",) if wants_app else ("xoxb-", "xoxp-")
        if (expected is not None and token != expected) or not token.startswith(prefixes):
            raise ApiError("invalid_auth")

    def _json(self, call: Call, body: Body) -> web.Response:
        call.response = body
        return web.json_response(body)

    def _ratelimited(self, call: Call, retry_after: int) -> web.Response:
        call.response, call.retry_after = {"ok": False, "error": "ratelimited"}, retry_after
        return web.json_response(call.response, status=429,
                                 headers={"Retry-After": str(retry_after)})

    async def _upload(self, request: web.Request) -> web.Response:
        content = await request.read()
        upload_id = request.match_info["upload_id"]
        call = Call("upload", {"upload_id": upload_id, "length": len(content)}, None,
                    self.state.clock())
        self._record(call)
        answer = api_files.receive_upload(self.state, upload_id, content)
        call.status = 200 if answer else 404
        CHANGES.notify()
        return web.Response(status=call.status, text=answer or "not found")

    async def _download(self, request: web.Request) -> web.Response:
        """A file's `url_private`: its bytes for the bot token; Slack's login page (HTML, 200)
        for a request without a valid one."""
        file_id = request.match_info["file_id"]
        call = Call("files-pri", {"file": file_id}, take_token(request, {}),
                    self.state.clock())
        self._record(call)
        stored = self.state.files.get(file_id)
        token = call.token or ""
        valid = token == self.bot_token if self.bot_token else token.startswith("xoxb-")
        valid = valid and self.files_read
        if stored is None or stored.content is None:
            call.status = 404
            return web.Response(status=404, text="not found")
        call.status = 200
        if not valid:
            return web.Response(text="<html>Sign in to Slack</html>", content_type="text/html")
        # Slack serves a file under a type fit for a header, whatever an event declared
        served = stored.mimetype if stored.mimetype.isascii() and stored.mimetype.isprintable() \
            and len(stored.mimetype) <= 128 else "application/octet-stream"
        return web.Response(body=stored.content, content_type=served)

    def _record(self, call: Call) -> None:
        self.calls.append(call)
        CHANGES.notify()

