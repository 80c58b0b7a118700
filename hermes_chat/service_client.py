"""The running hermes-chat service as the terminal chat sees it: its admin API over HTTP.

Sessions, runs, the run's event stream (SSE, resumed after the last id seen), answers to
questions and tool approvals, and stop: each a small call over `httpx`, each failure one
`ServiceError` whose message says what to do. Nothing here opens the database or the Bridge.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import httpx
from httpx_sse import aconnect_sse

from core.agent.events import KINDS, Event, parse_event
from core.errors import HermesChatError

Json = dict[str, Any]
STREAM_TIMEOUT = httpx.Timeout(10.0, read=None)  # a run may wait days on a question


class ServiceError(HermesChatError):
    """The service answered with an error (`code` its stable code, `status` the HTTP one)."""

    def __init__(self, message: str, code: str = "error", status: int = 0) -> None:
        super().__init__(message)
        self.code = code
        self.status = status


class ServiceDown(ServiceError):
    """Nothing answers at the service's address."""

    def __init__(self, url: str) -> None:
        super().__init__(f"no hermes-chat service on {url}: start it with ./scripts/serve",
                         code="service_down")


def service_url(host: str, port: int) -> str:
    """Where `serve` listens, as a client reaches it (a wildcard address means this machine)."""
    reachable = "127.0.0.1" if host in ("0.0.0.0", "", "::") else host
    return f"http://{f'[{reachable}]' if ':' in reachable else reachable}:{port}"


class ServiceClient:
    """The admin API routes the terminal chat uses (README "Admin API")."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http = http
        self.url = url

    @classmethod
    @contextlib.asynccontextmanager
    async def connect(cls, url: str, token: str | None) -> AsyncIterator[ServiceClient]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30.0) as http:
            yield cls(http, url)

    async def health(self) -> Json:
        return await self._call("GET", "/api/health", ok_statuses=(200, 503))

    async def sessions(self, limit: int = 20) -> list[Json]:
        page = await self._call("GET", "/api/chat/sessions", params={"limit": limit})
        return list(page["items"])

    async def session(self, session_id: int) -> Json:
        detail = await self._call("GET", f"/api/chat/sessions/{session_id}")
        return dict(detail["session"])

    async def messages(self, session_id: int, limit: int) -> tuple[list[Json], bool]:
        """The last `limit` messages of the active branch, oldest first; and whether there
        are more before them."""
        page = await self._call("GET", f"/api/chat/sessions/{session_id}/messages",
                                params={"limit": limit})
        return list(page["messages"]), bool(page["hasMore"])

    async def create_session(self) -> int:
        return int((await self._call("POST", "/api/chat/sessions", json={}))["id"])

    async def delete_session(self, session_id: int) -> None:
        await self._call("DELETE", f"/api/chat/sessions/{session_id}")

    async def start_run(self, session_id: int, text: str) -> Json:
        return await self._call("POST", f"/api/chat/sessions/{session_id}/runs",
                                json={"message": text})

    async def run_state(self, run_id: str) -> Json:
        return await self._call("GET", f"/api/chat/runs/{run_id}/state")

    async def resume(self, run_id: str, clarify_id: str, answer: str) -> Json:
        return await self._call("POST", f"/api/chat/runs/{run_id}/resume", json={
            "clarifyId": clarify_id, "answer": answer, "answeredBy": "terminal"})

    async def approvals(self) -> list[Json]:
        """Tool approvals waiting for a decision, every run's."""
        return list((await self._call("GET", "/api/chat/approvals"))["items"])

    async def decide(self, approval_id: str, decision: str) -> Json:
        return await self._call("POST", f"/api/chat/approvals/{approval_id}/decision",
                                json={"decision": decision})

    async def stop(self, run_id: str) -> Json:
        return await self._call("POST", f"/api/chat/runs/{run_id}/stop")

    async def events(self, run_id: str, after: int = 0) -> AsyncIterator[Event]:
        """The run's events after seq `after` until its stream ends (the run ended); a
        dropped connection raises ServiceDown (follow again after the last seq seen)."""
        headers = {"Last-Event-ID": str(after)} if after else {}
        try:
            async with aconnect_sse(self.http, "GET", f"/api/chat/runs/{run_id}/stream",
                                    headers=headers, timeout=STREAM_TIMEOUT) as source:
                if source.response.status_code != 200:
                    await source.response.aread()
                    raise self._refusal(source.response)
                async for sse in source.aiter_sse():
                    if sse.event not in KINDS:  # a comment or an event of a newer service
                        continue
                    event = parse_event(sse.id, sse.event, sse.data, datetime.now(UTC), run_id)
                    if event is not None:
                        yield event
        except httpx.TransportError as error:
            raise ServiceDown(self.url) from error

    async def _call(self, method: str, path: str, ok_statuses: tuple[int, ...] = (),
                    **kwargs: Any) -> Json:
        try:
            response = await self.http.request(method, path, **kwargs)
        except httpx.TransportError as error:
            raise ServiceDown(self.url) from error
        if response.status_code >= 400 and response.status_code not in ok_statuses:
            raise self._refusal(response)
        return response.json() if response.content else {}

    def _refusal(self, response: httpx.Response) -> ServiceError:
        if response.status_code == 401:
            return ServiceError(
                f"the service on {self.url} refused our ADMIN_TOKEN: give `chat` the same "
                "ADMIN_TOKEN as `serve` (in .env)", "unauthorized", 401)
        try:
            body = response.json()
            message, code = str(body["message"]), str(body["code"])
        except (ValueError, KeyError, TypeError):
            message, code = f"the service answered {response.status_code}", "error"
        return ServiceError(message, code, response.status_code)
