"""The Bridge's errors and their one translation to HTTP: `{"code", "message"}`, never a 500
for bad input."""

from __future__ import annotations

import logging

from litestar import Request, Response
from litestar.exceptions import HTTPException

logger = logging.getLogger(__name__)


class BridgeError(Exception):
    """An error the Bridge raises on purpose; `code` is stable for clients."""

    status = 400
    code = "invalid_request"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidRequest(BridgeError):
    """A body, header or id that can never succeed as sent."""


class RunNotFound(BridgeError):
    status, code = 404, "run_not_found"


class RunExists(BridgeError):
    status, code = 409, "run_exists"


class RunFinished(BridgeError):
    status, code = 409, "run_finished"


class ClarifyNotFound(BridgeError):
    status, code = 404, "clarify_not_found"


class ClarifyAnswered(BridgeError):
    status, code = 409, "clarify_answered"


_HTTP_CODES = {400: "invalid_request", 404: "not_found", 405: "method_not_allowed"}


def _body(code: str, message: str, status: int) -> Response[dict[str, str]]:
    return Response({"code": code, "message": message}, status_code=status)


def bridge_error_handler(_: Request, exc: BridgeError) -> Response[dict[str, str]]:
    """Translate a BridgeError into its JSON answer."""
    return _body(exc.code, exc.message, exc.status)


def http_error_handler(_: Request, exc: HTTPException) -> Response[dict[str, str]]:
    """Translate Litestar's own errors (unknown route, wrong method, bad body) the same way."""
    code = _HTTP_CODES.get(exc.status_code, "http_error")
    return _body(code, str(exc.detail), exc.status_code)


def internal_error_handler(request: Request, exc: Exception) -> Response[dict[str, str]]:
    """The HTTP error boundary: log the bug, answer a readable 500."""
    logger.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return _body("internal", "internal error in the Bridge; see its log", 500)


EXCEPTION_HANDLERS = {
    BridgeError: bridge_error_handler,
    HTTPException: http_error_handler,
    Exception: internal_error_handler,
}
