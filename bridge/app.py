"""Composition root of the Bridge: settings in, Litestar app out."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from litestar import Litestar
from litestar.di import Provide

from bridge.errors import EXCEPTION_HANDLERS
from bridge.hermes_home import prepare_hermes_home
from bridge.settings import BridgeSettings

if TYPE_CHECKING:
    from bridge.service import BridgeService

PRUNE_INTERVAL_SECONDS = 60.0
# A run's body carries its message's files as base64 (10 files of 20 MiB are about 270 MiB) and
# the images earlier in its branch; Litestar's default (10 MB) would refuse one screenshot.
MAX_REQUEST_BYTES = 512 * 1024 * 1024


def create_app(settings: BridgeSettings, secrets: Mapping[str, str] | None = None) -> Litestar:
    """The Bridge app. `secrets` is where `model.api_key_env` names are looked up
    (default: this process's environment)."""
    settings = replace(settings, instance=settings.instance or uuid.uuid4().hex)
    home = prepare_hermes_home(settings)
    # Imported only now: hermes-agent reads HERMES_HOME when its modules load.
    from bridge.agent_factory import AgentFactory
    from bridge.agent_pool import AgentPool
    from bridge.clarify_board import ClarifyBoard
    from bridge.memory_scopes import MemoryScopes
    from bridge.routes import bridge_routes
    from bridge.run_registry import RunRegistry
    from bridge.service import BridgeService

    scopes = MemoryScopes(home, settings.shared_memory)
    factory = AgentFactory(settings, scopes)
    service = BridgeService(
        settings,
        RunRegistry(settings.retention_seconds, time.monotonic, settings.run_buffer_bytes),
        AgentPool(settings.pool_size, factory.build),
        ClarifyBoard(settings.clarify_fallback_seconds),
        scopes,
        os.environ if secrets is None else secrets,
    )

    @contextlib.asynccontextmanager
    async def lifespan(_: Litestar) -> AsyncIterator[None]:
        pruner = asyncio.create_task(_prune_forever(service))
        try:
            yield
        finally:
            pruner.cancel()
            service.shutdown()
            factory.close()

    return Litestar(
        route_handlers=bridge_routes(settings.token),
        dependencies={"service": Provide(lambda: service, sync_to_thread=False)},
        exception_handlers=EXCEPTION_HANDLERS,  # type: ignore[arg-type]
        lifespan=[lifespan],
        openapi_config=None,
        request_max_body_size=MAX_REQUEST_BYTES,
        logging_config=None,  # keep the process's logging (LOG_FORMAT, LOG_LEVEL) as it is
    )


async def _prune_forever(service: BridgeService) -> None:
    interval = min(PRUNE_INTERVAL_SECONDS, service.settings.retention_seconds / 4)
    while True:
        await asyncio.sleep(interval)
        service.prune()
