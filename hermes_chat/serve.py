"""`hermes-chat serve`: migrate, connect, and serve until Ctrl-C / SIGTERM."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
from collections.abc import Iterator, Mapping

import uvicorn

from admin.app import create_app
from admin.services import AdminServices
from console.plugin import ConsolePlugin
from core.agent.default_model import DefaultModel, default_model
from core.config import Settings
from core.edge.access import check_binding
from core.edge.platform_links import PlatformLinks
from core.errors import InvalidInput
from hermes_chat.compose import Parts, running_parts
from hermes_chat.exits import Exit, StartupFailure
from hermes_chat.metrics import metrics_route
from hermes_chat.platforms import start_platforms, stop_platforms
from hermes_chat.startup import bind_admin_socket, check_settings

log = logging.getLogger("hermes_chat.serve")


async def serve(settings: Settings, environ: Mapping[str, str] | None = None) -> None:
    """Run every part whose settings are present; say in one line why each other part is not.
    `environ` (default: the process's) is what the child Bridge's environment is taken from.
    A start-up mistake is a StartupFailure, raised before the first line is logged. SIGINT
    and SIGTERM stop it cleanly at any moment, starting included."""
    try:
        _check_admin_binding(settings)
    except InvalidInput as error:
        raise StartupFailure(Exit.BAD_SETTING, error.message) from None
    check_settings(settings)
    with bind_admin_socket(settings) as admin_socket, StopSignals() as stop:
        try:
            await _run(settings, environ, admin_socket, stop)
        except asyncio.CancelledError:
            if not stop.requested:
                raise
            stop.stopped_while_starting()
    log.info("stopped")


async def _run(settings: Settings, environ: Mapping[str, str] | None,
               admin_socket: socket.socket, stop: StopSignals) -> None:
    async with running_parts(settings, environ) as parts:
        model = _report_model(settings, parts)
        links = PlatformLinks(down_after=settings.platform_down_seconds)
        services = AdminServices(bridge=parts.bridge, catalogue=parts.catalogue,
                                 runtime=parts.pool, platforms=links,
                                 bridge_child=parts.bridge_child, model=model,
                                 schedule_timezone=settings.schedule_timezone)
        app = create_app(settings, services, plugins=[ConsolePlugin(settings.admin_token)])
        app.register(metrics_route(parts.pool, links, parts.bridge_child))
        platforms = await start_platforms(settings, parts, app, links)
        try:
            config = uvicorn.Config(
                app, host=settings.admin_host, port=settings.admin_port,
                log_config=None, lifespan="on", timeout_graceful_shutdown=3,
            )
            log.info("admin API: listening on http://%s:%s (console at /console), %s",
                     settings.admin_host,
                     settings.admin_port, "bearer token required" if settings.admin_token
                     else "open to loopback callers (ADMIN_TOKEN unset)")
            await stop.serve(_QuietServer(config), admin_socket)
        finally:
            await stop_platforms(platforms)


class StopSignals:
    """SIGINT and SIGTERM from the first moment of `serve`: while starting, the first one
    cancels the start-up (each part it started stops on the way out); once serving, it asks
    uvicorn to exit. `requested` stays set, so a start-up step that swallowed the
    cancellation is not followed by serving."""

    def __init__(self) -> None:
        self.requested = False
        self._task: asyncio.Task[object] | None = None
        self._server: uvicorn.Server | None = None

    def __enter__(self) -> StopSignals:
        self._task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        for sig in SIGNALS:
            loop.add_signal_handler(sig, self._signalled, sig)
        return self

    def __exit__(self, *_: object) -> None:
        loop = asyncio.get_running_loop()
        for sig in SIGNALS:
            loop.remove_signal_handler(sig)

    async def serve(self, server: uvicorn.Server, sock: socket.socket) -> None:
        """uvicorn on the bound socket until a signal (at once if one came while starting)."""
        if self.requested:
            return
        self._server = server
        await server.serve(sockets=[sock])

    def stopped_while_starting(self) -> None:
        """The cancellation a signal made is spent: serve returns as from any stop."""
        if self._task is not None:
            self._task.uncancel()

    def _signalled(self, sig: signal.Signals) -> None:
        first, self.requested = not self.requested, True
        if self._server is not None:
            self._server.handle_exit(sig, None)
        elif first and self._task is not None:
            log.info("stopping (%s while starting)", sig.name)
            self._task.cancel()


SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _report_model(settings: Settings, parts: Parts) -> DefaultModel:
    """The start-up line of the model runs get by default: a warning when there is none."""
    model = default_model(parts.catalogue, settings.hermes_model, settings.openai_base_url,
                          external_bridges=parts.bridge_child is None)
    log.log(logging.WARNING if model.set_by is None else logging.INFO, "model: %s",
            model.describe())
    return model


def _check_admin_binding(settings: Settings) -> None:
    check_binding("the admin API", settings.admin_host, settings.admin_token, "ADMIN_HOST",
                  "ADMIN_TOKEN")


class _QuietServer(uvicorn.Server):
    """uvicorn re-raises the signal after its shutdown, which would skip our own clean-up;
    here the signal only asks the server to exit and `serve` then returns normally."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield
