"""The Bridge's bearer token (BRIDGE_TOKEN): a guard on every route but `GET /health`."""

from __future__ import annotations

from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler
from litestar.types import Guard

from bridge.errors import Unauthorized
from core.edge.access import bearer_matches


def token_guard(token: str) -> Guard:
    """A guard that lets a request through only with `Authorization: Bearer <token>`."""

    def require_token(connection: ASGIConnection, _: BaseRouteHandler) -> None:
        if not bearer_matches(connection.headers.get("authorization", ""), token):
            raise Unauthorized("a valid 'Authorization: Bearer <BRIDGE_TOKEN>' header is required")

    return require_token
