"""Responses in Discord's wire format.

discord.py only decodes a body as JSON when Content-Type is exactly `application/json`
(aiohttp's `json_response` adds `; charset=utf-8`, which discord.py would treat as text).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from aiohttp import web

# Discord JSON error codes used by the fake.
UNKNOWN_CHANNEL = 10003
UNKNOWN_MESSAGE = 10008
UNKNOWN_WEBHOOK = 10015
UNKNOWN_INTERACTION = 10062
CANNOT_EDIT_OTHERS = 50005
CANNOT_SEND_HERE = 50008
EMPTY_MESSAGE = 50006
INVALID_FORM_BODY = 50035
ALREADY_ACKNOWLEDGED = 40060
THREAD_ALREADY_CREATED = 160004


def json_response(
    body: Any, *, status: int = 200, headers: Mapping[str, str] | None = None
) -> web.Response:
    """A JSON response with exactly `Content-Type: application/json`."""
    encoded = json.dumps(body).encode()
    response = web.Response(body=encoded, status=status, headers=dict(headers or {}))
    response.headers["Content-Type"] = "application/json"
    return response


def no_content() -> web.Response:
    return web.Response(status=204)


def error(status: int, code: int, message: str) -> web.Response:
    """A plain Discord error: `{"message": ..., "code": ...}`."""
    return json_response({"message": message, "code": code}, status=status)


def not_found(code: int, what: str) -> web.Response:
    return error(404, code, f"Unknown {what}")


# One field error: dotted path ("embeds.0.description") -> (error code, message).
FieldErrors = dict[str, tuple[str, str]]


def form_error_body(errors: FieldErrors) -> dict[str, Any]:
    """Discord's 50035 body, errors nested by path with `_errors` leaves."""
    tree: dict[str, Any] = {}
    for path, (code, message) in errors.items():
        node = tree
        for part in path.split("."):
            node = node.setdefault(part, {})
        node.setdefault("_errors", []).append({"code": code, "message": message})
    return {"message": "Invalid Form Body", "code": INVALID_FORM_BODY, "errors": tree}


def form_error(errors: FieldErrors) -> web.Response:
    return json_response(form_error_body(errors), status=400)
