"""`GET /api/health`: is the service up, and can it reach its database."""

from __future__ import annotations

import logging

from litestar import Controller, get
from litestar.response import Response

from core import db

log = logging.getLogger(__name__)


class HealthController(Controller):
    path = "/api/health"

    @get("/", summary="Liveness and database reachability")
    async def health(self) -> Response[dict[str, str]]:
        try:
            await db.ping()
        except Exception:  # any failure means "not healthy": report it, never crash
            log.exception("health check: database unreachable")
            return Response({"status": "degraded", "database": "unreachable"}, status_code=503)
        return Response({"status": "ok", "database": "ok"})
