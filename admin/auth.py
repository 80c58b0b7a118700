"""Bearer-token guard of the admin API, /metrics and /schema (ADMIN_TOKEN); unset = open, since
serve binds loopback. Only /api/health is open with a token set (docs/security.md).

ADMIN_UNLIMITED_TOKEN is a second token with the same rights whose run starts no spend limit
refuses or stops (`unlimited`); the runs of ADMIN_TOKEN are limited like anyone's."""

from __future__ import annotations

from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException
from litestar.handlers.base import BaseRouteHandler

from core.edge.access import bearer_matches

TOKEN_KEY = "admin_token"
UNLIMITED_KEY = "admin_unlimited_token"
SCHEME = "BearerToken"


def require_admin_token(connection: ASGIConnection, _: BaseRouteHandler) -> None:
    """Let the request through only with `Authorization: Bearer <ADMIN_TOKEN>` (if one is set)."""
    expected: str | None = connection.app.state.get(TOKEN_KEY)
    if expected and not bearer_matches(connection.headers.get("authorization", ""), expected) \
            and not unlimited(connection):
        raise NotAuthorizedException(
            "a valid 'Authorization: Bearer <ADMIN_TOKEN>' header is required",
            headers={"WWW-Authenticate": "Bearer"},
        )


def unlimited(connection: ASGIConnection) -> bool:
    """Whether the request carries ADMIN_UNLIMITED_TOKEN: its runs are exempt from spend limits."""
    token: str | None = connection.app.state.get(UNLIMITED_KEY)
    return bool(token) and bearer_matches(connection.headers.get("authorization", ""), token or "")
