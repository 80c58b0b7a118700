"""`hermes-chat serve`: migrate, connect, and serve until Ctrl-C / SIGTERM."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Iterator, Mapping

import uvicorn

from admin.app import create_app
from admin.services import AdminServices
from core.config import Settings
from core.access import check_binding
from core.platform_links import PlatformLinks
from hermes_chat.compose import running_parts
from hermes_chat.metrics import metrics_route
from hermes_chat.platforms import start_platforms, stop_platforms

log = logging.getLogger("hermes_chat.serve")


async def serve(settings: Settings, environ: Mapping[str, str] | None = None) -> None:
    """Run every part whose settings are present; say in one line why each other part is not.
    `environ` (default: the process's) is what the child Bridge's environment is taken from."""
    _check_admin_binding(settings)
    async with running_parts(settings, environ) as parts:
        links = PlatformLinks(down_after=settings.platform_down_seconds)
        services = AdminServices(bridge=parts.bridge, catalogue=parts.catalogue, runtime=parts.pool,
                                 platforms=links, bridge_child=parts.bridge_child)
        app = create_app(settings, services)
        app.register(metrics_route(parts.pool, links, parts.bridge_child))
        platforms = await start_platforms(settings, parts, app, links)
        try:
            config = uvicorn.Config(
                app, host=settings.admin_host, port=settings.admin_port,
                log_config=None, lifespan="on", timeout_graceful_shutdown=3,
            )
            log.info("admin API: listening on http://%s:%s, %s", settings.admin_host,
                     settings.admin_port, "bearer token required" if settings.admin_token
                     else "open to loopback callers (ADMIN_TOKEN unset)")
            await _serve_until_signalled(_QuietServer(config))
        finally:
            await stop_platforms(platforms)
    log.info("stopped")


def _check_admin_binding(settings: Settings) -> None:
    check_binding("the admin API", settings.admin_host, settings.admin_token, "ADMIN_HOST",
                  "ADMIN_TOKEN")


class _QuietServer(uvicorn.Server):
    """uvicorn re-raises the signal after its shutdown, which would skip our own clean-up;
    here the signal only asks the server to exit and `serve` then returns normally."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def _serve_until_signalled(server: uvicorn.Server) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, server.handle_exit, sig, None)
    try:
        await server.serve()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
