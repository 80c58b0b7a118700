"""The one translation of errors to HTTP: JSON `{code, message, field?}`, never a 500 for input.

Core errors map by class, with the words meant for people (`public`: a Bridge outage's
status, route and body go to the log only); Litestar's own (validation, unknown route, wrong
method, body too large, missing token) keep their status with a stable code; an unreachable
database is a 503 `database_unavailable`; anything else is a bug: logged with its traceback
and answered 500 `internal`.
"""

from __future__ import annotations

import logging
import math
import re
from typing import Any

import msgspec
from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException

from core.errors import BridgeUnavailable, Conflict, HermesChatError, NotFound, SpendLimitReached
from core.conversation.vocabulary import is_outage
from core.text.field_errors import InvalidField

log = logging.getLogger(__name__)


class ErrorBody(msgspec.Struct, frozen=True, omit_defaults=True):
    """Every error answer; `field` names the input at fault (camelCase, as sent); `limit` the
    spend limit that refused a run (code `spend_limit`): scope, subject, period, unit, amount,
    used, resetsAt."""

    code: str
    message: str
    field: str | None = None
    limit: dict[str, Any] | None = None


_CORE_STATUS: tuple[tuple[type[HermesChatError], int], ...] = (
    (NotFound, 404), (Conflict, 409), (BridgeUnavailable, 503), (SpendLimitReached, 429),
)
_NAMED_FIELD = re.compile(r"field `([^`]+)`")
_HTTP_CODES = {
    400: "invalid_input", 401: "unauthorized", 403: "forbidden", 404: "not_found",
    405: "method_not_allowed", 409: "conflict", 413: "payload_too_large",
    415: "unsupported_media_type", 429: "rate_limited", 503: "unavailable",
}


def handle_error(request: Request, exc: Exception) -> Response[ErrorBody]:
    """The app's only exception handler."""
    if isinstance(exc, HermesChatError):
        if isinstance(exc, BridgeUnavailable):  # the client gets plain words, the log the rest
            log.warning("Bridge unavailable on %s %s: %s", request.method, request.url.path,
                        exc.message)
        return _answer(_core_status(exc), _core_body(exc), _core_headers(exc))
    if isinstance(exc, ValidationException):
        return _answer(400, _validation_body(exc, _sent_names(request)))
    if isinstance(exc, HTTPException) and exc.status_code < 500:
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        return _answer(exc.status_code, ErrorBody(code, str(exc.detail)), exc.headers)
    if is_outage(exc):
        log.warning("database unreachable on %s %s: %s", request.method, request.url.path, exc)
        return _answer(503, ErrorBody("database_unavailable", "the database is unreachable; "
                                      "try again shortly"), {"Retry-After": "5"})
    log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return _answer(500, ErrorBody("internal", "internal error; see the service log"))


def _core_status(exc: HermesChatError) -> int:
    return next((status for kind, status in _CORE_STATUS if isinstance(exc, kind)), 400)


def _core_body(exc: HermesChatError) -> ErrorBody:
    if isinstance(exc, InvalidField):
        name = camel(exc.field)
        return ErrorBody(exc.code, f"{name}: {exc.message}", name)
    if isinstance(exc, SpendLimitReached):
        return ErrorBody(exc.code, exc.public, limit=exc.limit)
    return ErrorBody(exc.code, exc.public)


def _core_headers(exc: HermesChatError) -> dict[str, str] | None:
    if isinstance(exc, SpendLimitReached):  # when the limit resets
        return {"Retry-After": str(math.ceil(exc.retry_after))}
    return None


def _validation_body(exc: ValidationException, sent_names: dict[str, str]) -> ErrorBody:
    problems = exc.extra if isinstance(exc.extra, list) else []
    details = [_detail(p, sent_names) for p in problems if isinstance(p, dict)]
    if not details:
        return ErrorBody("invalid_input", str(exc.detail))
    message = "; ".join(f"{key}: {text}" if key else text for key, text in details)
    field = details[0][0] if details[0][0] not in ("", "body") else None
    return ErrorBody("invalid_input", message, field)


def _detail(problem: dict[str, object], sent_names: dict[str, str]) -> tuple[str, str]:
    message = str(problem.get("message") or "")
    key = str(problem.get("key") or "")
    if key == "data":  # Litestar names the whole body after the handler's `data` parameter
        named = _NAMED_FIELD.search(message)
        key = named.group(1) if named else "body"
    return sent_names.get(key, key), message


def _sent_names(request: Request) -> dict[str, str]:
    """Handler parameter names -> the names clients send, where they differ (`Last-Event-ID`)."""
    handler = request.scope.get("route_handler")
    signature = getattr(handler, "parsed_fn_signature", None)
    if signature is None:
        return {}
    names = {}
    for name, field in signature.parameters.items():
        sent = getattr(field.kwarg_definition, "name", None)
        if isinstance(sent, str) and sent != name:
            names[name] = sent
    return names


def _answer(
    status: int, body: ErrorBody, headers: dict[str, str] | None = None
) -> Response[ErrorBody]:
    return Response(body, status_code=status, headers=headers)


def camel(name: str) -> str:
    """`skill_folder` -> `skillFolder`: how the API spells a core field name."""
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), name)
