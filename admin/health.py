"""`GET /api/health`: is the service up, can it reach its database and the Hermes Bridge, is
each chat platform it started connected.

503 when the database is unreachable (the service cannot work at all) or when a configured
platform has not been connected for longer than PLATFORM_DOWN_SECONDS (its users get no
answers); a Bridge that does not answer, or a platform reconnecting for less than that, makes
the status "degraded" (browsing and export still work), with 200. `platforms` lists only the
platforms `serve` started with a connection to watch, and is left out when there is none.
With a child Bridge (no HERMES_BRIDGE_URL), `bridgeProcess` says how its supervisor sees it.
`model` is the model a run that names none goes to (core/agent/default_model.py): null when none is
set, which makes the status "degraded" (every run would fail). With several Bridges
(HERMES_BRIDGE_URL lists them), `bridges` says how each answers: `bridge`
is "ok" while one does (runs go to those up), and the status is "degraded" while any does not.
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
from core.conversation.vocabulary import Bridge, BridgeFleet, DefaultModel, ping
from core.edge.platform_links import LinkState, PlatformLinks
from core.errors import HermesChatError

log = logging.getLogger(__name__)

BRIDGE_TIMEOUT = 3.0
Reachability = Literal["ok", "unreachable"]


class PlatformOut(msgspec.Struct, frozen=True):
    """One platform's connection; `reason` says why it is not `ok` (null when it is)."""

    state: LinkState  # "ok", "reconnecting" or "down"
    reason: str | None


class BridgeProcessOut(msgspec.Struct, frozen=True, rename="camel"):
    """The child Bridge of `serve`: restarted whenever it exits on its own."""

    state: Literal["starting", "running", "restarting", "stopped"]
    pid: int | None
    instance: str | None
    restarts: int
    last_exit: str | None


class BridgeOut(msgspec.Struct, frozen=True):
    """One Bridge of several; `reason` says why it is unreachable (null when it answers)."""

    state: Reachability
    reason: str | None


class DefaultModelOut(msgspec.Struct, frozen=True, rename="camel"):
    """The default model: `name` at `endpoint` (no credentials), chosen by `setBy`; name and
    endpoint are null when each external Bridge chooses (setBy HERMES_BRIDGE_URL)."""

    name: str | None
    endpoint: str | None
    set_by: Literal["MODELS_FILE", "HERMES_MODEL", "HERMES_BRIDGE_URL"]


class HealthOut(msgspec.Struct, frozen=True, omit_defaults=True, rename="camel"):
    status: Literal["ok", "degraded"]
    database: Reachability
    bridge: Reachability
    # null: no model is set (status "degraded"); left out when serve did not report one
    model: DefaultModelOut | None | msgspec.UnsetType = msgspec.UNSET
    platforms: dict[str, PlatformOut] = {}
    bridges: dict[str, BridgeOut] = {}  # only with several Bridges
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
            HealthOut, generate_examples=False,
            description="The database is unreachable, or a chat platform has not been "
                        "connected for longer than PLATFORM_DOWN_SECONDS",
        )},
    )
    async def health(self, services: NamedDependency[AdminServices]) -> Response[HealthOut]:
        report, serving = await health_report(services)
        return Response(report, status_code=200 if serving else 503)


async def health_report(services: AdminServices) -> tuple[HealthOut, bool]:
    """What `/api/health` says (the console's Now page shows it too), and whether the service
    can serve (False: the database is unreachable or a platform is down too long: 503)."""
    database, (bridge, bridges) = await asyncio.gather(_database(), _bridges(services.bridge))
    platforms, down = _platforms(services.platforms)
    every_part_ok = database == bridge == "ok" and all(
        p.state is LinkState.OK for p in platforms.values()) and all(
        b.state == "ok" for b in bridges.values())
    model = _model(services.model)
    status: Literal["ok", "degraded"] = "ok" if every_part_ok and model is not None \
        else "degraded"
    child = services.bridge_child
    process = None if child is None else msgspec.convert(child.health(), BridgeProcessOut)
    return (HealthOut(status, database, bridge, model, platforms, bridges, process),
            database == "ok" and not down)


def _model(model: DefaultModel | None) -> DefaultModelOut | None | msgspec.UnsetType:
    if model is None:
        return msgspec.UNSET
    if model.set_by is None:
        return None
    return DefaultModelOut(model.name, model.endpoint, model.set_by)


async def _database() -> Reachability:
    try:
        await ping()
    except Exception:  # any failure means "not healthy": report it, never crash
        log.exception("health check: database unreachable")
        return "unreachable"
    return "ok"


async def _bridges(bridge: Bridge) -> tuple[Reachability, dict[str, BridgeOut]]:
    """The Bridge's reachability, and each one's when there are several."""
    if not isinstance(bridge, BridgeFleet) or len(bridge.members) < 2:
        return await _bridge(bridge), {}
    reports = await bridge.reports(BRIDGE_TIMEOUT)
    for report in reports:
        if report.health is None:
            log.warning("health check: Bridge %s unreachable: %s", report.name, report.reason)
    each = {r.name: BridgeOut("ok" if r.health else "unreachable", r.reason) for r in reports}
    return ("ok" if any(r.health for r in reports) else "unreachable"), each


async def _bridge(bridge: Bridge) -> Reachability:
    try:
        await asyncio.wait_for(bridge.health(), BRIDGE_TIMEOUT)
    except (HermesChatError, TimeoutError) as error:
        reason = error.message if isinstance(error, HermesChatError) else "no answer in time"
        log.warning("health check: Bridge unreachable: %s", reason)
        return "unreachable"
    return "ok"


def _platforms(links: PlatformLinks) -> tuple[dict[str, PlatformOut], list[str]]:
    """Each platform's connection, and those down longer than the setting allows."""
    reports = links.reports()
    down = links.down_too_long()
    for name in down:
        log.warning("health check: %s not connected for %.0fs (more than %gs): %s", name,
                    reports[name].down_for, links.down_after, reports[name].reason)
    return {name: PlatformOut(r.state, r.reason) for name, r in reports.items()}, down
