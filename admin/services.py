"""What the admin handlers need from the outside, built once by the composition root."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from litestar.datastructures import State

from core.edge.platform_links import PlatformLinks
from core.conversation.vocabulary import Bridge, Catalogue, DefaultModel, RunPool

SERVICES_KEY = "admin_services"
KEEPALIVE_SECONDS = 15.0


class SupervisedBridge(Protocol):
    """The child Bridge process of `serve`, as health reports it."""

    def health(self) -> dict[str, object]:
        """Its state (starting, running, restarting, stopped), pid, instance, restarts and
        how the last one ended."""
        ...


@dataclass(frozen=True, slots=True)
class AdminServices:
    """The Bridge, the catalogue and the run pool; `keepalive` paces SSE comment lines;
    `platforms` holds the connection of each chat platform `serve` started (for health);
    `bridge_child` is the supervisor of a child Bridge (None for an external one);
    `model` is the default model `serve` found at start (None: not reported);
    `schedule_timezone` is SCHEDULE_TIMEZONE."""

    bridge: Bridge
    catalogue: Catalogue
    runtime: RunPool
    keepalive: float = KEEPALIVE_SECONDS
    platforms: PlatformLinks = field(default_factory=PlatformLinks)
    bridge_child: SupervisedBridge | None = None
    model: DefaultModel | None = None
    schedule_timezone: str = "UTC"  # SCHEDULE_TIMEZONE: a new schedule's unless it names one


def provide_services(state: State) -> AdminServices:
    """The dependency controllers declare: the services `create_app` put in the app state."""
    services: AdminServices = state[SERVICES_KEY]
    return services
