"""The admin HTTP application: sessions, messages, runs, catalogue and health."""

from __future__ import annotations

from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

from litestar import Litestar, Router
from litestar.di import Provide
from litestar.datastructures import State
from litestar.plugins import PluginProtocol

from admin.auth import TOKEN_KEY, UNLIMITED_KEY, require_admin_token
from admin.catalogue import CatalogueController
from admin.channels.controller import ChannelController
from admin.errors import handle_error
from admin.health import HealthController
from admin.messages.controller import MessageController
from admin.openapi import SECURITY, StrictStructSchemaPlugin, openapi_config
from admin.request_checks import check_request
from admin.approvals.controller import ApprovalController
from admin.runs.controller import RunController
from admin.schedules.controller import ScheduleController
from admin.services import SERVICES_KEY, AdminServices, provide_services
from admin.sessions.controller import SessionController
from admin.usage.controller import UsageController
from core.config import Settings

MAX_BODY_BYTES = 1024 * 1024


def create_app(settings: Settings, services: AdminServices,
               plugins: Sequence[PluginProtocol] = ()) -> Litestar:
    """The Litestar app served by `hermes-chat serve` on ADMIN_HOST:ADMIN_PORT; `plugins` add
    the front ends served beside the API (the console: console.plugin.ConsolePlugin)."""
    return Litestar(
        route_handlers=[HealthController, _guarded_api()],
        state=State({SERVICES_KEY: services, TOKEN_KEY: settings.admin_token,
                     UNLIMITED_KEY: settings.admin_unlimited_token}),
        exception_handlers={Exception: handle_error},
        before_request=check_request,
        openapi_config=openapi_config(_version()),
        plugins=[StrictStructSchemaPlugin(), *plugins],
        request_max_body_size=MAX_BODY_BYTES,
        logging_config=None,
    )


def _guarded_api() -> Router:
    """Every route but health: the bearer guard, its OpenAPI security, and the services."""
    return Router(
        path="/",
        route_handlers=[SessionController, MessageController, RunController, CatalogueController,
                        ApprovalController, UsageController, ScheduleController,
                        ChannelController],
        guards=[require_admin_token],
        security=SECURITY,
        dependencies={"services": Provide(provide_services, sync_to_thread=False)},
    )


def _version() -> str:
    try:
        return version("hermes-chat")
    except PackageNotFoundError:
        return "0.0.0"
