"""Serve the Bridge with uvicorn (blocking; uvicorn stops cleanly on SIGINT/SIGTERM)."""

from __future__ import annotations

import logging
from collections.abc import Mapping

import uvicorn

from bridge.app import create_app
from bridge.settings import BridgeSettings
from core.edge.access import check_binding

log = logging.getLogger("bridge")


def serve(settings: BridgeSettings, secrets: Mapping[str, str] | None = None) -> None:
    """Run the Bridge on settings.host:settings.port until a signal stops it. Without a token
    it only binds to loopback (InvalidInput otherwise), like the admin API. `secrets`: where
    `model.api_key_env` names are looked up (default: this process's environment)."""
    check_binding("the Bridge", settings.host, settings.token, "BRIDGE_HOST", "BRIDGE_TOKEN")
    log.info("bridge: %s on http://%s:%s",
             "bearer token required" if settings.token
             else "open to loopback callers (BRIDGE_TOKEN unset)", settings.host, settings.port)
    config = uvicorn.Config(
        create_app(settings, secrets),
        host=settings.host,
        port=settings.port,
        lifespan="on",
        log_config=None,  # uvicorn's records go to the root logger the command configured
        # SSE streams are long-lived; give them a moment to end on shutdown.
        timeout_graceful_shutdown=5,
    )
    uvicorn.Server(config).run()
