"""`BridgeClient`: the `Bridge` port over HTTP (httpx + httpx-sse), docs/bridge-protocol.md."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import UTC, datetime
from types import MappingProxyType, TracebackType
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
import msgspec

from core.agent.bridge.errors import describe_failure, error_body, error_for, garbage, unreachable
from core.agent.bridge.port import LastSeq
from core.agent.bridge.stream import AlreadyStarted, Dropped, ResumableStream, Sleep, StreamPolicy
from core.agent.bridge.types import Health, Memory, RunRequest, RunState
from core.agent.events import Event
from core.errors import Conflict, HermesChatError, NotFound

log = logging.getLogger(__name__)
T = TypeVar("T")
_SSE_HEADERS = MappingProxyType({"Accept": "text/event-stream", "Cache-Control": "no-store"})
# Failures that mean a request never reached the Bridge (anything else may have).
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.UnsupportedProtocol)


class _Abort(msgspec.Struct):
    run_id: str
    state: str


class _Answer(msgspec.Struct):
    clarify_id: str
    run_id: str


class _Steered(msgspec.Struct):
    run_id: str
    accepted: bool


class _Decided(msgspec.Struct):
    approval_id: str
    run_id: str


class _Reset(msgspec.Struct):
    session_id: str
    dropped: bool


def _utc_now() -> datetime:
    return datetime.now(UTC)


class BridgeClient:
    """Every Bridge call; built once at the composition root and passed down. `token` is the
    Bridge's BRIDGE_TOKEN, sent as `Authorization: Bearer` with every call."""

    def __init__(
        self,
        base_url: str,
        *,
        http: httpx.AsyncClient | None = None,
        token: str | None = None,
        policy: StreamPolicy | None = None,
        call_timeout: float = 10.0,
        clock: Callable[[], datetime] = _utc_now,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self._base = base_url.rstrip("/")
        self._owns_http = http is None
        self._http = http or httpx.AsyncClient()
        self._auth = {"Authorization": f"Bearer {token}"} if token else {}
        self._policy = policy or StreamPolicy()
        self._call_timeout = call_timeout
        self._clock = clock
        self._sleep = sleep

    async def aclose(self) -> None:
        """Close the HTTP client if this object created it."""
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> BridgeClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    # --- streams ----------------------------------------------------------------------

    def stream(self, request: RunRequest, last_seq: LastSeq | None = None) -> AsyncIterator[Event]:
        """POST the run and yield each event once, in order, until done/error, reconnecting
        on drops; `409 run_exists` falls back to following. Raises BridgeUnavailable if the
        run cannot be started or the stream stays lost."""
        return self._resumable(request.run_id, request, last_seq).events(start=True)

    def follow(self, run_id: str, last_seq: LastSeq | None = None) -> AsyncIterator[Event]:
        """Yield the events of a known run after `last_seq()` (from the start if None), once
        each, until done/error. Raises NotFound if the Bridge does not know the run."""
        return self._resumable(run_id, None, last_seq).events(start=False)

    def _resumable(
        self, run_id: str, request: RunRequest | None, last_seq: LastSeq | None
    ) -> ResumableStream:
        def opener(resume: int | None) -> AbstractAsyncContextManager[httpx.Response]:
            return self._open(run_id, request if resume is None else None, resume or 0)

        async def ended(seen: int) -> bool:
            state = await self.run_state(run_id)
            return state.state in ("done", "error") and state.last_event_id <= seen

        return ResumableStream(
            run_id, opener, self._policy, self._sleep, self._clock, last_seq, ended
        )

    @asynccontextmanager
    async def _open(
        self, run_id: str, request: RunRequest | None, resume: int
    ) -> AsyncIterator[httpx.Response]:
        body = _encoded(request) if request is not None else None
        outgoing = self._stream_request(run_id, body, resume)
        try:
            response = await self._http.send(outgoing, stream=True)
        except httpx.TransportError as exc:
            if request is not None and not isinstance(exc, _NOT_SENT):
                await self._abort_unanswered(run_id)
            raise Dropped(unreachable(self._base, exc).message) from exc
        try:
            try:
                await _check_stream(response, starting=request is not None)
            except Dropped:
                if request is not None:
                    await self._abort_unanswered(run_id)
                raise
            yield response
        finally:
            await response.aclose()

    async def _abort_unanswered(self, run_id: str) -> None:
        """`POST /run` got no usable answer, yet the Bridge may have started the run: abort it,
        so that no agent runs that nobody follows (the Bridge also refuses a start of it that
        arrives after this abort)."""
        try:
            await self.abort(run_id)
        except (NotFound, Conflict):
            return  # it never started, or it has already ended
        except HermesChatError as error:
            log.warning("could not abort run %s, whose start got no answer: %s", run_id,
                        error.message, extra={"run_id": run_id})
            return
        log.warning("aborted run %s on the Bridge: its start got no answer", run_id,
                    extra={"run_id": run_id})

    def _stream_request(self, run_id: str, body: bytes | None, resume: int) -> httpx.Request:
        timeout = self._policy.timeout()
        headers = {**_SSE_HEADERS, **self._auth}
        if body is not None:
            headers["Content-Type"] = "application/json"
            return self._http.build_request(
                "POST", self._url("/run"), content=body, headers=headers, timeout=timeout
            )
        if resume:
            headers["Last-Event-ID"] = str(resume)
        url = self._url(f"/runs/{_seg(run_id)}/events")
        return self._http.build_request("GET", url, headers=headers, timeout=timeout)

    # --- calls ------------------------------------------------------------------------

    async def run_state(self, run_id: str) -> RunState:
        """Where a run stands ("unknown" if the Bridge never saw it or forgot it)."""
        return await self._call("GET", f"/runs/{_seg(run_id)}", RunState)

    async def abort(self, run_id: str) -> str:
        """Stop a run; returns its state. NotFound if unknown, Conflict if already finished."""
        return (await self._call("POST", f"/runs/{_seg(run_id)}/abort", _Abort)).state

    async def steer(self, run_id: str, text: str) -> bool:
        """Guidance for a running turn, read at its next step. NotFound if the Bridge does not
        know the run, Conflict once it has ended."""
        path = f"/runs/{_seg(run_id)}/steer"
        return (await self._call("POST", path, _Steered, {"text": text})).accepted

    async def answer_clarify(self, clarify_id: str, answer: str) -> str:
        """Send the user's answer; returns the run id. Conflict if already answered."""
        path = f"/clarify/{_seg(clarify_id)}/answer"
        return (await self._call("POST", path, _Answer, {"answer": answer})).run_id

    async def answer_approval(self, run_id: str, approval_id: str, decision: str) -> str:
        """Send the decision on a tool approval; returns the run id. NotFound if the Bridge
        does not know it, Conflict if already decided."""
        body = {"approval_id": approval_id, "decision": decision}
        path = f"/runs/{_seg(run_id)}/approval"
        return (await self._call("POST", path, _Decided, body)).run_id

    async def reset_session(self, session_id: str) -> bool:
        """Drop the session's agent; True if one was loaded."""
        return (await self._call("POST", f"/sessions/{_seg(session_id)}/reset", _Reset)).dropped

    async def get_memory(self, session_id: str) -> Memory:
        """MEMORY.md and USER.md of the session."""
        return await self._call("GET", f"/sessions/{_seg(session_id)}/memory", Memory)

    async def set_memory(
        self, session_id: str, *, memory: str | None = None, user: str | None = None
    ) -> Memory:
        """Replace MEMORY.md and/or USER.md (None leaves one unchanged)."""
        body = {k: v for k, v in (("memory", memory), ("user", user)) if v is not None}
        return await self._call("POST", f"/sessions/{_seg(session_id)}/memory", Memory, body)

    async def health(self) -> Health:
        """Liveness and load of the Bridge."""
        return await self._call("GET", "/health", Health)

    async def _call(self, method: str, path: str, answer: type[T], body: Any = None) -> T:
        try:
            response = await self._http.request(
                method, self._url(path), json=body, headers=self._auth,
                timeout=self._call_timeout,
            )
        except httpx.TransportError as exc:
            raise unreachable(self._base, exc) from exc
        if response.status_code >= 400:
            raise error_for(response)
        try:
            return msgspec.json.decode(response.content, type=answer)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise garbage(f"{method} {path}", exc) from exc

    def _url(self, path: str) -> str:
        return f"{self._base}{path}"


async def _check_stream(response: httpx.Response, *, starting: bool) -> None:
    if response.status_code < 400:
        return
    await response.aread()
    body = error_body(response)
    if starting and response.status_code == 409 and body.code == "run_exists":
        raise AlreadyStarted(body.message)
    if response.status_code >= 500:
        raise Dropped(describe_failure(response, body))
    raise error_for(response)


def _seg(value: str) -> str:
    return quote(value, safe="")


def _encoded(request: RunRequest) -> bytes:
    """The body of `POST /run`. With a conversation's images it is tens of megabytes, one C
    call the event loop waits for: msgspec takes about 16 ms for 27 MB where the json module
    httpx would use takes about 63."""
    return msgspec.json.encode(request.to_json())
