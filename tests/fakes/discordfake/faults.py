"""Fault switches: make the next N calls of a route fail, or hang until released.

Routes are named like discord.py's `Route.key`, e.g.
`"PATCH /channels/{channel_id}/messages/{message_id}"`; shell-style wildcards work
(`"POST /interactions/*"`). Note discord.py retries 500/502/504/524 itself after sleeping
1, 3, 5... seconds, while other 5xx (503) raise `DiscordServerError` at once.
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


@dataclass
class _Failure:
    route: str
    remaining: int
    status: int
    body: Any
    headers: dict[str, str] | None = None


class FaultBoard:
    """The armed faults of one fake, consumed in the order they were armed."""

    def __init__(self, notify: Callable[[], None]) -> None:
        self._notify = notify
        self._failures: list[_Failure] = []
        self._hangs: list[Hang] = []

    def fail(self, route: str, *, times: int = 1, status: int = 503, body: Any = None,
             headers: dict[str, str] | None = None) -> None:
        body = body if body is not None else {"message": f"{status}: injected failure", "code": 0}
        self._failures.append(_Failure(route, times, status, body, headers))

    def hang(self, route: str, *, times: int = 1) -> Hang:
        hang = Hang(route, times)
        self._hangs.append(hang)
        return hang

    def release_all(self) -> None:
        for hang in self._hangs:
            hang.release()

    async def apply(self, route_key: str) -> web.Response | None:
        """An injected failure response, after waiting out any matching hang."""
        for hang in self._hangs:
            if hang.remaining > 0 and fnmatch.fnmatchcase(route_key, hang.route):
                hang.remaining -= 1
                hang.arrived += 1
                self._notify()
                await hang.released.wait()
                break
        for failure in self._failures:
            if failure.remaining > 0 and fnmatch.fnmatchcase(route_key, failure.route):
                failure.remaining -= 1
                return json_response(failure.body, status=failure.status, headers=failure.headers)
        return None
