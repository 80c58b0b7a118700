"""Fault switches: make the next N calls of a route fail, or hang until released, or take
Discord down for a window of the fake's clock (an outage).

Routes are named like discord.py's `Route.key`, e.g.
`"PATCH /channels/{channel_id}/messages/{message_id}"`; shell-style wildcards work
(`"POST /interactions/*"`). Note discord.py retries 500/502/504/524 itself after sleeping
1, 3, 5... seconds, while other 5xx (503) raise `DiscordServerError` at once. A call held by
a hang meets Discord as it is when let go: down, if an outage began while it was held.
"""

from __future__ import annotations

import asyncio
import fnmatch
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from .responses import json_response


@dataclass
class Hang:
    """Requests held by `hang_next`; `arrived` counts the ones that reached it."""

    route: str
    remaining: int
    arrived: int = 0
    released: asyncio.Event = field(default_factory=asyncio.Event)

    def release(self) -> None:
        """Let every held (and future matching) request through."""
        self.released.set()


@dataclass(frozen=True)
class Met:
    """A call that met an outage: its route and the fake's clock as it arrived."""

    route: str
    at: float


@dataclass
class Outage:
    """Calls of `route` before `until` (the fake's clock) are not applied: they answer
    `status` at once, or with `hang` only when the outage ends (a client's timeout fires
    first). `calls` are the ones that met it (`met` how many); `end()` ends it now."""

    route: str
    until: float
    status: int = 503
    hang: bool = False
    calls: list[Met] = field(default_factory=list)

    @property
    def met(self) -> int:
        return len(self.calls)

    def met_at(self, route: str) -> list[float]:
        """When the calls of `route` (wildcards work) that met the outage arrived, in order."""
        return [call.at for call in self.calls if fnmatch.fnmatchcase(call.route, route)]

    def end(self) -> None:
        self.until = float("-inf")


@dataclass
class _Failure:
    route: str
    remaining: int
    status: int
    body: Any
    headers: dict[str, str] | None = None


class FaultBoard:
    """The armed faults of one fake, consumed in the order they were armed."""

    def __init__(self, notify: Callable[[], None], clock: Callable[[], float]) -> None:
        self._notify = notify
        self._clock = clock
        self._failures: list[_Failure] = []
        self._hangs: list[Hang] = []
        self._outages: list[Outage] = []

    def fail(self, route: str, *, times: int = 1, status: int = 503, body: Any = None,
             headers: dict[str, str] | None = None) -> None:
        body = body if body is not None else {"message": f"{status}: injected failure", "code": 0}
        self._failures.append(_Failure(route, times, status, body, headers))

    def hang(self, route: str, *, times: int = 1) -> Hang:
        hang = Hang(route, times)
        self._hangs.append(hang)
        return hang

    def outage(self, route: str, seconds: float, status: int, hang: bool) -> Outage:
        outage = Outage(route, self._clock() + seconds, status, hang)
        self._outages.append(outage)
        return outage

    def release_all(self) -> None:
        for hang in self._hangs:
            hang.release()
        for outage in self._outages:
            outage.end()

    async def apply(self, route_key: str) -> web.Response | None:
        """An injected failure response, after waiting out any matching hang."""
        for hang in self._hangs:
            if hang.remaining > 0 and fnmatch.fnmatchcase(route_key, hang.route):
                hang.remaining -= 1
                hang.arrived += 1
                self._notify()
                await hang.released.wait()
                break
        outage = next((o for o in self._outages
                       if self._clock() < o.until and fnmatch.fnmatchcase(route_key, o.route)), None)
        if outage is not None:
            return await self._down(outage, route_key)
        for failure in self._failures:
            if failure.remaining > 0 and fnmatch.fnmatchcase(route_key, failure.route):
                failure.remaining -= 1
                return json_response(failure.body, status=failure.status, headers=failure.headers)
        return None

    async def _down(self, outage: Outage, route_key: str) -> web.Response:
        outage.calls.append(Met(route_key, self._clock()))
        self._notify()
        while outage.hang and self._clock() < outage.until:
            await asyncio.sleep(0.01)  # the window is on the test's clock: look at it again
        body = {"message": f"{outage.status}: Service Unavailable (injected outage)", "code": 0}
        return json_response(body, status=outage.status)
