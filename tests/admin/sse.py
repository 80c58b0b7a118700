"""Reading the admin API's Server-Sent Events as a browser's EventSource would."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx


@dataclass(frozen=True)
class Frame:
    """One SSE message: an event (`id`, `event`, `data` parsed as JSON) or a comment."""

    id: int | None = None
    event: str | None = None
    data: Any = None
    comment: str | None = None


@asynccontextmanager
async def stream(
    client: httpx.AsyncClient, run_id: str, *, last_event_id: int | None = None,
    query: int | None = None,
) -> AsyncIterator[AsyncIterator[Frame]]:
    """The run's stream (resumed by header and/or query); leaving the block drops the connection."""
    headers = {} if last_event_id is None else {"Last-Event-ID": str(last_event_id)}
    params = {} if query is None else {"lastEventId": query}
    url = f"/api/chat/runs/{run_id}/stream"
    async with client.stream("GET", url, headers=headers, params=params) as response:
        assert response.status_code == 200, (await response.aread()).decode()
        assert response.headers["content-type"].startswith("text/event-stream")
        yield frames(response)


async def frames(response: httpx.Response) -> AsyncIterator[Frame]:
    fields: dict[str, str] = {}
    comment: str | None = None
    async for line in response.aiter_lines():
        if line:
            name, _, value = line.partition(":")
            if not name:
                comment = value.strip()
            else:
                fields[name] = value.removeprefix(" ")
            continue
        if fields or comment is not None:
            yield _frame(fields, comment)
        fields, comment = {}, None


def _frame(fields: dict[str, str], comment: str | None) -> Frame:
    data = json.loads(fields["data"]) if "data" in fields else None
    ident = int(fields["id"]) if "id" in fields else None
    return Frame(ident, fields.get("event"), data, comment)


async def events(source: AsyncIterator[Frame], stop: Callable[[Frame], bool] | None = None
                 ) -> list[Frame]:
    """The events (not comments) until `stop` holds for one (included) or the stream ends."""
    seen = []
    async for frame in source:
        if frame.comment is not None:
            continue
        seen.append(frame)
        if stop is not None and stop(frame):
            break
    return seen
