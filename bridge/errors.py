"""The Bridge's errors and their one translation to HTTP: `{"code", "message"}`, never a 500
for bad input."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import MappingProxyType

from litestar import Request, Response
from litestar.exceptions import HTTPException

logger = logging.getLogger(__name__)


class BridgeError(Exception):
    """An error the Bridge raises on purpose; `code` is stable for clients."""

    status = 400
    code = "invalid_request"
    headers: Mapping[str, str] = MappingProxyType({})

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidRequest(BridgeError):
    """A body, header or id that can never succeed as sent."""


class Unauthorized(BridgeError):
    """A guarded route called without the Bridge's token (or with a wrong one)."""

    status, code = 401, "unauthorized"
    headers = MappingProxyType({"WWW-Authenticate": "Bearer"})


class KeyNotAllowed(BridgeError):
    """`model.api_key_env` names a variable that BRIDGE_KEY_ENVS does not list."""

    code = "key_not_allowed"


class ToolsetNotAllowed(BridgeError):
    """`toolsets` names a toolset that BRIDGE_TOOLSETS does not enable on this Bridge."""

    code = "toolset_not_allowed"


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


class ApprovalNotFound(BridgeError):
    status, code = 404, "approval_not_found"


class ApprovalAnswered(BridgeError):
    status, code = 409, "approval_answered"


_HTTP_CODES = {400: "invalid_request", 404: "not_found", 405: "method_not_allowed"}


def _body(code: str, message: str, status: int,
          headers: Mapping[str, str] | None = None) -> Response[dict[str, str]]:
    return Response({"code": code, "message": message}, status_code=status,
                    headers=dict(headers or {}))


def bridge_error_handler(_: Request, exc: BridgeError) -> Response[dict[str, str]]:
    """Translate a BridgeError into its JSON answer."""
    return _body(exc.code, exc.message, exc.status, exc.headers)


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
