"""`GET /api/health`: is the service up, can it reach its database and the Hermes Bridge.

503 only when the database is unreachable (the service cannot work at all); a Bridge that does
not answer makes the status "degraded" (browsing and export still work), with 200. With a child
Bridge (no HERMES_BRIDGE_URL), `bridgeProcess` says how its supervisor sees it.
"""

from __future__ import annotations

import asyncio
import logging
from types import MappingProxyType
from typing import Literal

import msgspec
from litestar import Controller, get
from litestar.di import NamedDependency, Provide
from litestar.openapi import ResponseSpec
from litestar.response import Response

from admin.services import AdminServices, provide_services
from core import db
from core.bridge_port import Bridge
from core.errors import HermesChatError

log = logging.getLogger(__name__)

BRIDGE_TIMEOUT = 3.0
Reachability = Literal["ok", "unreachable"]


class BridgeProcessOut(msgspec.Struct, frozen=True, rename="camel"):
    """The child Bridge of `serve`: restarted whenever it exits on its own."""

    state: Literal["starting", "running", "restarting", "stopped"]
    pid: int | None
    instance: str | None
    restarts: int
    last_exit: str | None


class HealthOut(msgspec.Struct, frozen=True, omit_defaults=True, rename="camel"):
    status: Literal["ok", "degraded"]
    database: Reachability
    bridge: Reachability
    bridge_process: BridgeProcessOut | None = None  # only with a child Bridge


class HealthController(Controller):
    path = "/api/health"
    tags = ("health",)
    dependencies = MappingProxyType(
        {"services": Provide(provide_services, sync_to_thread=False)}
    )

    @get(
        "/", summary="Liveness, database and Bridge reachability (no token needed)",
        responses={503: ResponseSpec(
            HealthOut, description="The database is unreachable", generate_examples=False
        )},
    )
    async def health(self, services: NamedDependency[AdminServices]) -> Response[HealthOut]:
        database, bridge = await asyncio.gather(_database(), _bridge(services.bridge))
        status = "ok" if database == bridge == "ok" else "degraded"
        child = services.bridge_child
        process = None if child is None else msgspec.convert(child.health(), BridgeProcessOut)
        return Response(
            HealthOut(status, database, bridge, process),
            status_code=200 if database == "ok" else 503,
        )


async def _database() -> Reachability:
    try:
        await db.ping()
    except Exception:  # any failure means "not healthy": report it, never crash
        log.exception("health check: database unreachable")
        return "unreachable"
    return "ok"


async def _bridge(bridge: Bridge) -> Reachability:
    try:
        await asyncio.wait_for(bridge.health(), BRIDGE_TIMEOUT)
    except (HermesChatError, TimeoutError) as error:
        reason = error.message if isinstance(error, HermesChatError) else "no answer in time"
        log.warning("health check: Bridge unreachable: %s", reason)
        return "unreachable"
    return "ok"
