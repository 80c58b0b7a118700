"""The admin HTTP application (DESIGN §7); later issues add sessions, runs and Slack events."""

from __future__ import annotations

from litestar import Litestar

from admin.health import HealthController
from core.config import Settings


def create_app(settings: Settings) -> Litestar:
    """The Litestar app served by `hermes-chat serve` on ADMIN_HOST:ADMIN_PORT."""
    del settings  # read by the routes later issues add (admin token, Slack secrets)
    return Litestar(route_handlers=[HealthController], openapi_config=None, logging_config=None)
