"""Bearer-token guard of the admin API, /metrics and /schema (ADMIN_TOKEN); unset = open, since
serve binds loopback. Only /api/health is open with a token set (docs/security.md)."""

from __future__ import annotations

from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException
from litestar.handlers.base import BaseRouteHandler

from core.edge.access import bearer_matches

TOKEN_KEY = "admin_token"
SCHEME = "BearerToken"


def require_admin_token(connection: ASGIConnection, _: BaseRouteHandler) -> None:
    """Let the request through only with `Authorization: Bearer <ADMIN_TOKEN>` (if one is set)."""
    expected: str | None = connection.app.state.get(TOKEN_KEY)
    if expected and not bearer_matches(connection.headers.get("authorization", ""), expected):
        raise NotAuthorizedException(
            "a valid 'Authorization: Bearer <ADMIN_TOKEN>' header is required",
            headers={"WWW-Authenticate": "Bearer"},
        )
