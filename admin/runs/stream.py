"""A run's events as Server-Sent Events, resumable by event id.

Each event is sent as the Bridge sends it (docs/bridge-protocol.md): `id:` its seq, `event:` its
kind, `data:` its JSON fields. The stored log comes first, then live events, each once, and the
stream ends after the run's last event. A `: keep-alive` comment goes out whenever nothing else
has for `keepalive` seconds, so proxies and clients keep an idle stream open.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

import msgspec
from litestar.openapi.spec import (
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    Operation,
    Schema,
)
from litestar.response import ServerSentEvent
from litestar.response.sse import ServerSentEventMessage

from core.conversation import views
from core.conversation.vocabulary import KINDS, Event, RunPool, kind_of
from core.errors import HermesChatError

log = logging.getLogger(__name__)
KEEPALIVE_COMMENT = "keep-alive"


async def event_stream(pool: RunPool, run_id: str, after: int, keepalive: float) -> ServerSentEvent:
    """The run's events after seq `after`; NotFound (a JSON 404) before any byte is streamed."""
    events = await views.run_events(pool, run_id, after)
    return ServerSentEvent(_with_keepalive(events, keepalive))


def sse_message(event: Event) -> ServerSentEventMessage:
    """One event as the Bridge sends it: `id:` its seq, `event:` its kind, `data:` the rest
    of its fields (but `at`, which the Bridge does not send) as JSON."""
    fields = msgspec.structs.asdict(event)
    del fields["seq"], fields["at"]
    return ServerSentEventMessage(
        data=msgspec.json.encode(fields).decode(), event=kind_of(event), id=event.seq
    )


async def _with_keepalive(
    events: AsyncIterator[Event], keepalive: float
) -> AsyncIterator[ServerSentEventMessage]:
    # The next event is awaited in a task of its own: a timeout must not cancel the follower.
    waiting: asyncio.Task[Event | None] | None = None
    try:
        while True:
            waiting = waiting or asyncio.create_task(_next(events))
            done, _ = await asyncio.wait({waiting}, timeout=keepalive)
            if not done:
                yield ServerSentEventMessage(data=None, comment=KEEPALIVE_COMMENT)
                continue
            finished, waiting = waiting, None
            try:
                event = finished.result()
            except HermesChatError as error:  # e.g. a stored row no event maps to
                log.warning("the stream of a run ends early: %s", error.message)
                return
            if event is None:
                return
            yield sse_message(event)
    finally:  # the client went away, or the run ended
        if waiting is not None:
            waiting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await waiting
        await events.aclose()  # type: ignore[attr-defined]  # an async generator


async def _next(events: AsyncIterator[Event]) -> Event | None:
    try:
        return await anext(events)
    except StopAsyncIteration:
        return None


# One event of the stream (as OpenAPI 3.2's `itemSchema` would say; 3.1 readers take `schema`).
EVENT_SCHEMA = Schema(
    type=OpenAPIType.OBJECT,
    required=["id", "event", "data"],
    properties={
        "id": Schema(type=OpenAPIType.STRING, pattern=r"^[1-9][0-9]*$",
                     description="the event's seq in its run: resume after it with Last-Event-ID"),
        "event": Schema(type=OpenAPIType.STRING, enum=sorted(KINDS)),
        "data": Schema(type=OpenAPIType.STRING, content_media_type="application/json",
                       description="the event's fields, as docs/bridge-protocol.md lists them"),
    },
)


@dataclass
class EventStreamOperation(Operation):
    """The stream's 200 answer: `text/event-stream`, not JSON."""

    def __post_init__(self) -> None:
        self.responses = {
            **(self.responses or {}),
            "200": OpenAPIResponse(
                description=(
                    "Server-Sent Events, one per run event: `id: <seq>`, `event: <kind>`, "
                    "`data: <JSON>` as the Hermes Bridge sends it; `: keep-alive` comments while "
                    "idle. The stored log comes first, then live events; the stream ends after "
                    "the run's last event (`done` or `error`; a run stopped while queued, or "
                    "failed by this service, ends without one: read its state)."
                ),
                content={"text/event-stream": OpenAPIMediaType(schema=EVENT_SCHEMA)},
            ),
        }
