"""`POST /slack/events` for Litestar: bolt has no Litestar adapter, so this is the ~20 lines of
bolt's Starlette one: the raw body and headers in, `async_dispatch`, the BoltResponse out.

bolt's verifier reads the timestamp with `int()`, so an empty or non-numeric one would be a
500; such a request (and a body that is not UTF-8) is refused here first, as bolt refuses any
request it cannot verify: 401 with `{"error": "invalid request"}`. A signed body bolt could not
read (bots/slack/intake.py) is acknowledged here, 200, without it."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from litestar import Request, Response, post
from litestar.handlers import HTTPRouteHandler
from slack_bolt.async_app import AsyncApp, AsyncBoltRequest
from slack_sdk.signature import SignatureVerifier

from .intake import readable, unreadable

PATH = "/slack/events"
REFUSAL = b'{"error": "invalid request"}'  # what bolt answers a request it cannot verify
REFUSED = "Invalid request signature detected"  # how bolt's verifier starts its log line


class _WithoutBody(logging.Filter):
    """bolt logs a request that fails verification with its whole body at INFO: message text,
    which the log must not carry at that level. The line stays, the body goes."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str) and record.msg.startswith(REFUSED):
            record.msg, record.args = f"{REFUSED} (body withheld)", ()
        return True


# bolt names this logger after the class and keeps the filters it finds on it
_verifier_log = logging.getLogger("slack_bolt.RequestVerification")
if not any(isinstance(f, _WithoutBody) for f in _verifier_log.filters):
    _verifier_log.addFilter(_WithoutBody())


def events_route(app: AsyncApp, signing_secret: str | None, path: str = PATH) -> HTTPRouteHandler:
    """Events, interactions and slash commands all arrive here (Slack signs each one, with
    `signing_secret`; None when the app checks no signature)."""
    verifier = SignatureVerifier(signing_secret) if signing_secret else None

    @post(path, include_in_schema=False, status_code=200)
    async def slack_events(request: Request) -> Response[bytes]:
        body = await request.body()
        if not _verifiable(body, request.headers.get("x-slack-request-timestamp", "0")):
            return Response(content=REFUSAL, status_code=401,
                            media_type="application/json")
        text = body.decode("utf-8")
        if not readable(text, request.headers.get("content-type", "").split(";")[0] or None):
            return _acknowledged(verifier, text, request.headers)
        headers: dict[str, str | Sequence[str]] = {
            name: request.headers.getall(name) for name in request.headers}
        bolt_request = AsyncBoltRequest(body=text, headers=headers,
                                        query=request.scope.get("query_string", b"").decode())
        answer = await app.async_dispatch(bolt_request)
        return Response(content=(answer.body or "").encode(), status_code=answer.status,
                        headers=answer.first_headers_without_set_cookie())

    return slack_events


def _acknowledged(verifier: SignatureVerifier | None, body: str,
                  headers: Mapping[str, str]) -> Response[bytes]:
    if verifier is not None and not verifier.is_valid(
            body, headers.get("x-slack-request-timestamp", ""), headers.get("x-slack-signature", "")):
        return Response(content=REFUSAL, status_code=401, media_type="application/json")
    unreadable("an HTTP request")
    return Response(content=b"", status_code=200)


def _verifiable(body: bytes, timestamp: str) -> bool:
    """Whether bolt can check this request's signature at all."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return timestamp.isascii() and timestamp.isdigit()
