"""`hermes-chat bridge` takes its settings from the service's (docs/configuration.md, "The Hermes
Bridge")."""

from __future__ import annotations

from bridge.settings import BridgeSettings
from core.config import Settings
from hermes_chat.bridge_command import bridge_settings


def test_nothing_configured_gives_the_bridge_its_own_defaults() -> None:
    assert bridge_settings(Settings.from_env({})) == BridgeSettings()


def test_every_bridge_key_reaches_the_bridge() -> None:
    settings = bridge_settings(Settings.from_env({
        "BRIDGE_HOST": "0.0.0.0", "BRIDGE_PORT": "9000", "HERMES_HOME": "/srv/hermes",
        "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1", "OPENAI_API_KEY": "sk-local",
        "HERMES_MODEL": "qwen", "BRIDGE_TOOLSETS": "todo,web", "BRIDGE_SHARED_MEMORY": "true",
        "BRIDGE_POOL_SIZE": "3", "CLARIFY_FALLBACK_HOURS": "48", "BRIDGE_TOKEN": "tok",
        "BRIDGE_KEY_ENVS": "FAST_KEY, DEEP_KEY", "LOG_LEVEL": "DEBUG", "LOG_FORMAT": "json",
    }))
    assert settings == BridgeSettings(
        host="0.0.0.0", port=9000, hermes_home="/srv/hermes",
        openai_base_url="http://127.0.0.1:8000/v1", openai_api_key="sk-local", model="qwen",
        toolsets=("todo", "web"), shared_memory=True, pool_size=3,
        clarify_fallback_seconds=48 * 3600, token="tok", key_envs=("FAST_KEY", "DEEP_KEY"),
        log_level="DEBUG", log_format="json",
    )
