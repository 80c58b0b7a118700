"""Serve the Bridge with uvicorn (blocking; uvicorn stops cleanly on SIGINT/SIGTERM)."""

from __future__ import annotations

import uvicorn

from bridge.app import create_app
from bridge.settings import BridgeSettings


def serve(settings: BridgeSettings) -> None:
    """Run the Bridge on settings.host:settings.port until a signal stops it."""
    config = uvicorn.Config(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        lifespan="on",
        log_config=None,  # uvicorn's records go to the root logger the command configured
        # SSE streams are long-lived; give them a moment to end on shutdown.
        timeout_graceful_shutdown=5,
    )
    uvicorn.Server(config).run()
