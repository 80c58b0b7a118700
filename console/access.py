"""Who may use the console: a signed session cookie after a sign-in with ADMIN_TOKEN, a CSRF
token on every form that changes something, and without a token loopback callers only (as the
admin API: `serve` then binds loopback).

The cookie is `<expiry>.<nonce>.<signature>`, signed with a key derived from ADMIN_TOKEN, so every
replica accepts it and changing the token signs everyone out; without a token the key is this
process's own. A form's CSRF token is the HMAC of the cookie's nonce: a page of another site can
neither read it nor (SameSite=Strict) send the cookie with its request.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException, PermissionDeniedException
from litestar.handlers.base import BaseRouteHandler

from core.edge.access import is_loopback

COOKIE = "hermes_console"
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"
SESSION_SECONDS = 12 * 3600
ACCESS_KEY = "console_access"  # where the app state keeps the ConsoleAccess
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


@dataclass(frozen=True, slots=True)
class Visit:
    """The console session of one request: its nonce, and the cookie to set when the request
    came without one (an open console gives a loopback visitor a session at once)."""

    nonce: str
    new_cookie: str | None = None


@dataclass(frozen=True)
class ConsoleAccess:
    """The console's keys and rules; `token` is ADMIN_TOKEN (None: open to loopback)."""

    token: str | None
    clock: Callable[[], float] = time.time
    _key: bytes = field(default=b"", repr=False)

    def __post_init__(self) -> None:
        key = (hmac.new(self.token.encode(), b"hermes-chat console session", hashlib.sha256)
               .digest() if self.token else secrets.token_bytes(32))
        object.__setattr__(self, "_key", key)

    @property
    def open(self) -> bool:
        return not self.token

    def token_matches(self, given: str) -> bool:
        """The sign-in form's token, compared in constant time."""
        return bool(self.token) and hmac.compare_digest(given.strip().encode(),
                                                        (self.token or "").encode())

    def issue(self) -> tuple[str, str]:
        """A new session: (its nonce, the cookie's value)."""
        nonce = secrets.token_urlsafe(18)
        payload = f"{int(self.clock()) + SESSION_SECONDS}.{nonce}"
        return nonce, f"{payload}.{self._sign('session', payload)}"

    def nonce_of(self, cookie: str | None) -> str | None:
        """The nonce of a cookie this console signed and that has not expired, else None."""
        expiry, _, rest = (cookie or "").partition(".")
        nonce, _, signature = rest.partition(".")
        if not (expiry.isdigit() and nonce and signature):
            return None
        expected = self._sign("session", f"{expiry}.{nonce}")
        if not hmac.compare_digest(signature.encode(), expected.encode()):
            return None
        return nonce if int(expiry) > self.clock() else None

    def csrf(self, nonce: str) -> str:
        """The CSRF token of a session: every form that changes something carries it."""
        return self._sign("csrf", nonce)

    def _sign(self, purpose: str, text: str) -> str:
        return hmac.new(self._key, f"{purpose}:{text}".encode(), hashlib.sha256).hexdigest()


def access_of(connection: ASGIConnection[Any, Any, Any, Any]) -> ConsoleAccess:
    access: ConsoleAccess = connection.app.state[ACCESS_KEY]
    return access


def visit_of(connection: ASGIConnection[Any, Any, Any, Any]) -> Visit:
    """The session the guard found (or made) for this request."""
    visit: Visit = connection.state["console_visit"]
    return visit


def require_session(connection: ASGIConnection[Any, Any, Any, Any],
                    handler: BaseRouteHandler) -> None:
    """The console's guard: a signed, unexpired cookie; with no ADMIN_TOKEN, a loopback caller
    (given a session at once). NotAuthorized sends a browser to the sign-in page. Handlers
    marked `public` (the sign-in) need no session."""
    access = access_of(connection)
    if access.open and not is_loopback(connection.client.host if connection.client else ""):
        raise PermissionDeniedException("the console is open to loopback callers only")
    if handler.opt.get("public"):
        return
    nonce = access.nonce_of(connection.cookies.get(COOKIE))
    if nonce is not None:
        connection.state["console_visit"] = Visit(nonce)
    elif access.open:
        connection.state["console_visit"] = Visit(*access.issue())
    else:
        raise NotAuthorizedException("sign in with the admin token")


async def check_form(request: Request[Any, Any, Any]) -> None:
    """The console's `before_request` (after the guard): a request that changes something comes
    from a page of this console (its Origin, if sent, is this host) and carries the session's
    CSRF token (the form's `csrf` field, or the X-CSRF-Token header)."""
    if request.method in SAFE_METHODS:
        return
    _same_origin(request)
    if request.route_handler.opt.get("public"):
        return  # the sign-in: nothing to protect yet, and no session to bind a token to
    given = request.headers.get(CSRF_HEADER) or (await request.form()).get(CSRF_FIELD) or ""
    visit = request.state.get("console_visit")
    expected = access_of(request).csrf(visit.nonce) if visit is not None else ""
    if not (given and expected and hmac.compare_digest(str(given), expected)):
        raise PermissionDeniedException("this form has expired: reload the page and try again")


def _same_origin(request: Request[Any, Any, Any]) -> None:
    origin = request.headers.get("origin")
    if origin is None:
        return  # not a browser's cross-site request (browsers send Origin on every POST)
    if urlsplit(origin).netloc != request.headers.get("host", ""):
        raise PermissionDeniedException("a request from another site was refused")
