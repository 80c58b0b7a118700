"""`POST /slack/events` for Litestar: bolt has no Litestar adapter, so this is the ~20 lines of
bolt's Starlette one: the raw body and headers in, `async_dispatch`, the BoltResponse out.

bolt's verifier reads the timestamp with `int()`, so an empty or non-numeric one would be a
500; such a request (and a body that is not UTF-8) is refused here first, as bolt refuses any
request it cannot verify: 401 with `{"error": "invalid request"}`."""

from __future__ import annotations

import logging

from litestar import Request, Response, post
from litestar.handlers import HTTPRouteHandler
from slack_bolt.async_app import AsyncApp, AsyncBoltRequest

PATH = "/slack/events"
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


def events_route(app: AsyncApp, path: str = PATH) -> HTTPRouteHandler:
    """Events, interactions and slash commands all arrive here (Slack signs each one)."""

    @post(path, include_in_schema=False, status_code=200)
    async def slack_events(request: Request) -> Response[bytes]:  # type: ignore[type-arg]
        body = await request.body()
        if not _verifiable(body, request.headers.get("x-slack-request-timestamp", "0")):
            return Response(content=b'{"error": "invalid request"}', status_code=401,
                            media_type="application/json")
        headers = {name: request.headers.getall(name) for name in request.headers}
        bolt_request = AsyncBoltRequest(body=body.decode("utf-8"), headers=headers,
                                        query=request.scope.get("query_string", b"").decode())
        answer = await app.async_dispatch(bolt_request)
        return Response(content=(answer.body or "").encode(), status_code=answer.status,
                        headers=answer.first_headers_without_set_cookie())

    return slack_events


def _verifiable(body: bytes, timestamp: str) -> bool:
    """Whether bolt can check this request's signature at all."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return timestamp.isascii() and timestamp.isdigit()
