"""Where every Slack request enters: typed before a listener sees it, and acknowledged at
once when it is nothing for us (no 404 or 5xx for Slack to retry and count against the app).

`InboundMiddleware`, a bolt global middleware (it runs after bolt's signature check and
authorization), parses the body (`inbound.parse`), keeps the typed value in the request's
context for the listener (`typed`), and answers an ignored one itself, logged once at debug.
An event a replica took already (its `event_id` is in core's EventLedger: a retry, or the
same delivery load-balanced twice) is answered here too, and no listener sees it again.
The transports (http.py, Socket Mode in supervisor.py) first ask `readable`: a body bolt
itself cannot read (it indexes some fields while building a request) never reaches it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.middleware.async_middleware import AsyncMiddleware
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.request.internals import parse_body
from slack_bolt.response import BoltResponse

from bots.fields import text
from core.conversation.event_ledger import EventLedger

from .inbound import Click, Ignored, Inbound, bolt_can_read, parse

log = logging.getLogger(__name__)
KEY = "hermes_inbound"
T = TypeVar("T", bound=Inbound)


class InboundMiddleware(AsyncMiddleware):
    def __init__(self, ledger: EventLedger) -> None:
        self._ledger = ledger

    async def async_process(self, *, req: AsyncBoltRequest, resp: BoltResponse,
                            next: Callable[[], Awaitable[BoltResponse]]) -> BoltResponse | None:
        value = parse(req.body)
        if isinstance(value, Ignored):
            log.debug("slack: ignored %s", value.reason)
            return BoltResponse(status=200, body="")
        event_id = text(req.body.get("event_id"))
        if event_id and not await self._ledger.first("slack", event_id):
            log.debug("slack: event %s was handled already", event_id)
            return BoltResponse(status=200, body="")
        req.context[KEY] = value
        return await next()


def inbound_of(context: AsyncBoltContext) -> Inbound:
    """The typed payload `InboundMiddleware` kept for this request's listener."""
    value = context.get(KEY)
    return value if value is not None else Ignored("no typed payload")


def typed(context: AsyncBoltContext, kind: type[T]) -> T:
    """The payload of this request's listener, which takes only a `kind`."""
    value = inbound_of(context)
    if not isinstance(value, kind):  # a listener registered for what it cannot take
        raise TypeError(f"a {kind.__name__} listener was given {type(value).__name__}")
    return value


async def retired(ack: AsyncAck, context: AsyncBoltContext) -> None:
    """A click on a button of ours this version no longer has (an old message's)."""
    await ack()
    log.debug("slack: ignored a click on %s, a retired button", typed(context, Click).action_id)


def readable(raw: str, content_type: str | None) -> bool:
    """Whether bolt can build a request of this HTTP body (parsed as bolt parses it)."""
    try:
        body = parse_body(raw, content_type)
    except ValueError:  # JSON that is not JSON
        return False
    return bolt_can_read(body)


def unreadable(what: str) -> None:
    log.debug("slack: acknowledged %s that slack-bolt cannot read", what)
