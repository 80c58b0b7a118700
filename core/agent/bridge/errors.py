"""Bridge HTTP answers turned into core errors, with readable reasons."""

from __future__ import annotations

import msgspec
import httpx

from core.edge.urls import redacted_url
from core.errors import BridgeUnavailable, Conflict, HermesChatError, InvalidInput, NotFound


class BridgeErrorBody(msgspec.Struct, frozen=True):
    """The Bridge's error body: `{"code", "message"}`."""

    code: str = "unknown"
    message: str = ""


def error_body(response: httpx.Response) -> BridgeErrorBody:
    """The error body of a (read) response, or one describing the raw text if it is not JSON."""
    try:
        return msgspec.json.decode(response.content, type=BridgeErrorBody)
    except (msgspec.DecodeError, msgspec.ValidationError):
        text = response.text.strip()[:200] or response.reason_phrase
        return BridgeErrorBody("unreadable", text)


def error_for(response: httpx.Response) -> HermesChatError:
    """The core error for a failed answer: 404 NotFound, 409 Conflict, 4xx InvalidInput,
    anything else (a refused token too) BridgeUnavailable; the Bridge's own message is kept."""
    body = error_body(response)
    status = response.status_code
    if status == 401:  # no request can succeed until the tokens agree: the service is down
        return BridgeUnavailable(f"the Hermes Bridge refused our token ({body.message or body.code}"
                                 "): BRIDGE_TOKEN must be the same on both sides")
    if status == 404:
        return NotFound(body.message or f"not found: {response.request.url.path}")
    if status == 409:
        return Conflict(body.message or body.code)
    if 400 <= status < 500:
        return InvalidInput(body.message or body.code)
    return BridgeUnavailable(describe_failure(response, body))


def describe_failure(response: httpx.Response, body: BridgeErrorBody) -> str:
    """A one-line reason for a 5xx (or otherwise unusable) answer."""
    request = response.request
    detail = f": {body.message}" if body.message else ""
    return (
        f"the Hermes Bridge answered {response.status_code} {response.reason_phrase} "
        f"to {request.method} {request.url.path}{detail}"
    )


def unreachable(base_url: str, exc: httpx.TransportError) -> BridgeUnavailable:
    """The error for a Bridge that could not be reached at all."""
    reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return BridgeUnavailable(f"the Hermes Bridge at {redacted_url(base_url)} did not answer ({reason})")


def garbage(what: str, exc: Exception) -> BridgeUnavailable:
    """The error for an answer that is not what the protocol says."""
    return BridgeUnavailable(f"the Hermes Bridge answered garbage to {what}: {exc}")
