"""`POST /slack/events` for Litestar: bolt has no Litestar adapter, so this is the ~20 lines of
bolt's Starlette one: the raw body and headers in, `async_dispatch`, the BoltResponse out.

The signature is checked here, before bolt sees the request (the app is built with
`request_verification_enabled=False`, which bolt provides for requests verified elsewhere):
a request whose signature does not verify, whose timestamp is not a number or whose body is
not UTF-8 gets what bolt answers, 401 with `{"error": "invalid request"}`, and the operator a
WARNING saying the likely cause, at most one a minute with the count refused since (a wrong
SLACK_SIGNING_SECRET refuses every request; bolt's own line is INFO, with the body). A signed
body bolt could not read (bots/slack/intake.py) is acknowledged here, 200, without it."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

from litestar import Request, Response, post
from litestar.handlers import HTTPRouteHandler
from slack_bolt.async_app import AsyncApp, AsyncBoltRequest
from slack_sdk.signature import SignatureVerifier

from .intake import readable, unreadable

PATH = "/slack/events"
REFUSAL = b'{"error": "invalid request"}'  # what bolt answers a request it cannot verify
WARN_EVERY = 60.0  # seconds between two warnings about refused requests
LIKELY_CAUSE = ("SLACK_SIGNING_SECRET does not match the app's Signing Secret (Basic Information "
                "page), or the request is older than 5 minutes: check the clock")
WINDOW = 5 * 60  # seconds a signature stays valid (slack_sdk's SignatureVerifier)

log = logging.getLogger(__name__)


class Refusals:
    """Requests refused for their signature. The first is a WARNING at once, then at most one
    every `every` seconds, counting the requests refused since the last one."""

    def __init__(self, path: str, clock: Callable[[], float], every: float = WARN_EVERY) -> None:
        self._path = path
        self._clock = clock
        self._every = every
        self._unreported = 0
        self._warned_at: float | None = None

    def refuse(self, timestamp: str) -> Response[bytes]:
        self._unreported += 1
        now = self._clock()
        if self._warned_at is None or now - self._warned_at >= self._every:
            count = self._unreported
            log.warning("slack: refused %d %s to %s (401, signature not valid)%s: %s (%s)",
                        count, "request" if count == 1 else "requests", self._path,
                        "" if self._warned_at is None else f" in the last {now - self._warned_at:.0f} s",
                        LIKELY_CAUSE, _age(timestamp))
            self._warned_at, self._unreported = now, 0
        return Response(content=REFUSAL, status_code=401, media_type="application/json")


def _age(timestamp: str) -> str:
    """How far the latest refused request's timestamp is from this machine's clock."""
    if not (timestamp.isascii() and timestamp.isdigit()):
        return "the latest had no readable X-Slack-Request-Timestamp"
    skew = int(time.time()) - int(timestamp)
    where = "outside" if abs(skew) > WINDOW else "within"
    return f"the latest was stamped {skew} s before this machine's clock, {where} the 5 minutes"


def events_route(app: AsyncApp, signing_secret: str | None, path: str = PATH,
                 clock: Callable[[], float] = time.monotonic) -> HTTPRouteHandler:
    """Events, interactions and slash commands all arrive here (Slack signs each one, with
    `signing_secret`; None when no signature is checked). `clock` spaces the warnings."""
    verifier = SignatureVerifier(signing_secret) if signing_secret else None
    refusals = Refusals(path, clock)

    @post(path, include_in_schema=False, status_code=200)
    async def slack_events(request: Request) -> Response[bytes]:
        body = await request.body()
        timestamp = request.headers.get("x-slack-request-timestamp", "")
        if not _verifiable(body, timestamp) or (verifier is not None and not verifier.is_valid(
                body, timestamp, request.headers.get("x-slack-signature", ""))):
            return refusals.refuse(timestamp)
        text = body.decode("utf-8")
        if not readable(text, request.headers.get("content-type", "").split(";")[0] or None):
            unreadable("an HTTP request")
            return Response(content=b"", status_code=200)
        headers: dict[str, str | Sequence[str]] = {
            name: request.headers.getall(name) for name in request.headers}
        bolt_request = AsyncBoltRequest(body=text, headers=headers,
                                        query=request.scope.get("query_string", b"").decode())
        answer = await app.async_dispatch(bolt_request)
        return Response(content=(answer.body or "").encode(), status_code=answer.status,
                        headers=answer.first_headers_without_set_cookie())

    return slack_events


def _verifiable(body: bytes, timestamp: str) -> bool:
    """Whether this request's signature can be checked at all (slack_sdk reads the timestamp
    with `int()`: an empty or non-numeric one would be a 500)."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return timestamp.isascii() and timestamp.isdigit()
