"""`hermes-chat bridge`: the Bridge service, configured from the same settings as the rest."""

from __future__ import annotations

from collections.abc import Mapping

from bridge.server import serve
from bridge.settings import DEFAULT_TOOLSETS, BridgeSettings
from core.config import Settings


def bridge_settings(settings: Settings) -> BridgeSettings:
    """The Bridge's share of the service settings."""
    return BridgeSettings(
        host=settings.bridge_host,
        port=settings.bridge_port,
        hermes_home=settings.hermes_home,
        openai_base_url=settings.openai_base_url,
        openai_api_key=settings.openai_api_key,
        model=settings.hermes_model,
        toolsets=settings.bridge_toolsets or DEFAULT_TOOLSETS,
        shared_memory=settings.bridge_shared_memory,
        pool_size=settings.bridge_pool_size,
        clarify_fallback_seconds=settings.clarify_fallback_hours * 3600.0,
        run_buffer_bytes=settings.bridge_run_buffer_bytes,
        token=settings.bridge_token,
        key_envs=settings.bridge_key_envs,
        log_level=settings.log_level,
        log_format=settings.log_format,
    )


def run_bridge(settings: Settings, environ: Mapping[str, str] | None = None) -> None:
    """Serve the Bridge until SIGINT/SIGTERM. `environ` (the process's environment over
    `.env`) is where the keys BRIDGE_KEY_ENVS lists are read, like every other setting."""
    serve(bridge_settings(settings), environ)
