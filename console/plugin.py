"""The console joins the app `serve` builds as a Litestar plugin: its pages under /console (signed
in, CSRF-checked, HTML errors), its templates, and its assets from console/static."""

from __future__ import annotations

from litestar import Router, get
from litestar.config.app import AppConfig
from litestar.datastructures import CacheControlHeader
from litestar.di import Provide
from litestar.plugins import InitPlugin
from litestar.response import Redirect
from litestar.static_files import create_static_files_router
from litestar.template.config import TemplateConfig

from admin.services import provide_services
from console.access import ACCESS_KEY, ConsoleAccess, check_form, require_session
from console.answers import AnswerController
from console.conversations import ConversationController
from console.feedback import FeedbackController
from console.now import NowController
from console.rendering import HERE, PREFIX, add_security_headers, handle_error, template_engine
from console.sign_in import SignInController
from console.usage import UsageController
from core.errors import NotFound

STATIC_CACHE_SECONDS = 3600


class ConsolePlugin(InitPlugin):
    """Adds the console to an app whose state holds the admin services (admin.app.create_app);
    `admin_token` is ADMIN_TOKEN (None: the console is open to loopback callers)."""

    __slots__ = ("access",)

    def __init__(self, admin_token: str | None) -> None:
        self.access = ConsoleAccess(admin_token)

    def on_app_init(self, app_config: AppConfig) -> AppConfig:
        app_config.route_handlers += [console_router(), _static_router()]
        app_config.template_config = TemplateConfig(instance=template_engine())
        app_config.state[ACCESS_KEY] = self.access
        return app_config


@get("/", include_in_schema=False, opt={"public": True})
async def console_home() -> Redirect:
    return Redirect(f"{PREFIX}/conversations", status_code=303)


@get("/{rest:path}", include_in_schema=False)
async def no_such_page(rest: str) -> None:
    """Any other /console/... path: a page saying so (the app's own 404 is the API's JSON)."""
    raise NotFound(f"there is no console page {PREFIX}{rest}")


def console_router() -> Router:
    """The pages: each needs a session (but the sign-in's), each form its CSRF token."""
    return Router(
        path=PREFIX,
        route_handlers=[console_home, SignInController, ConversationController, AnswerController,
                        NowController, FeedbackController, UsageController, no_such_page],
        guards=[require_session],
        before_request=check_form,
        after_request=add_security_headers,
        exception_handlers={Exception: handle_error},
        dependencies={"services": Provide(provide_services, sync_to_thread=False)},
        include_in_schema=False,
    )


def _static_router() -> Router:
    return create_static_files_router(
        path=f"{PREFIX}/static", directories=[HERE / "static"], name="console_static",
        cache_control=CacheControlHeader(max_age=STATIC_CACHE_SECONDS),
        after_request=add_security_headers, include_in_schema=False,
    )
