"""What the admin handlers need from the outside, built once by the composition root."""

from __future__ import annotations

from dataclasses import dataclass

from litestar.datastructures import State

from core.bridge_port import Bridge
from core.catalogue import Catalogue

SERVICES_KEY = "admin_services"


@dataclass(frozen=True, slots=True)
class AdminServices:
    """The Bridge and the catalogue today; the run pool (`runtime`) joins with the run routes."""

    bridge: Bridge
    catalogue: Catalogue


def provide_services(state: State) -> AdminServices:
    """The dependency controllers declare: the services `create_app` put in the app state."""
    services: AdminServices = state[SERVICES_KEY]
    return services
