"""The child Bridge's environment is an allow-list (issue 12 §3): what the Bridge reads, what a
Python process needs, the keys the catalogue names; no bot or admin token, no DATABASE_URL."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.settings import BridgeSettings
from core.agent.catalogue import Catalogue, ModelEntry
from core.config import Settings
from core.errors import InvalidInput
from hermes_chat.bridge_environment import SERVICE_SECRETS, child_environment, child_key_envs

SERVE_ENV = {
    "PATH": "/usr/bin", "HOME": "/home/hermes", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
    "HTTPS_PROXY": "http://proxy:3128", "SSL_CERT_FILE": "/etc/ssl/ca.pem",
    "SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "sig", "SLACK_APP_TOKEN": "xapp-1",
    "DISCORD_TOKEN": "discord", "ADMIN_TOKEN": "admin", "DATABASE_URL": "postgres://u:pw@h/db",
    "AWS_SECRET_ACCESS_KEY": "aws", "GITHUB_TOKEN": "ghp", "FAST_API_KEY": "sk-fast",
    "UNUSED_API_KEY": "sk-unused", "HERMES_QUIET": "1", "OPENAI_ORG": "org",
}


def _catalogue(*keys: str | None) -> Catalogue:
    models = tuple(ModelEntry(f"m{i}", f"m{i}", "x", None, key) for i, key in enumerate(keys))
    return Catalogue(models, Path("skills"))


def test_only_what_the_bridge_needs_goes_to_the_child() -> None:
    settings = Settings.from_env({**SERVE_ENV, "BRIDGE_PORT": "19000", "OPENAI_API_KEY": "sk-o",
                                  "HERMES_MODEL": "qwen", "LOG_FORMAT": "json"})
    keys = child_key_envs(settings, _catalogue("FAST_API_KEY", None, "FAST_API_KEY"))
    env = child_environment(settings, SERVE_ENV, "tok-123", keys)
    assert keys == ("FAST_API_KEY",)
    assert not SERVICE_SECRETS & set(env)
    assert not {"AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "UNUSED_API_KEY"} & set(env)
    assert env["FAST_API_KEY"] == "sk-fast" and env["BRIDGE_KEY_ENVS"] == "FAST_API_KEY"
    assert env["BRIDGE_TOKEN"] == "tok-123" and env["BRIDGE_PORT"] == "19000"
    assert (env["OPENAI_API_KEY"], env["HERMES_MODEL"], env["LOG_FORMAT"]) == ("sk-o", "qwen",
                                                                             "json")
    for kept in ("PATH", "HOME", "LANG", "LC_ALL", "HTTPS_PROXY", "SSL_CERT_FILE",
                 "HERMES_QUIET", "OPENAI_ORG"):
        assert env[kept] == SERVE_ENV[kept], kept
    # The child reads back exactly the Bridge settings `serve` meant for it.
    read = BridgeSettings.from_env(env)
    assert (read.port, read.token, read.key_envs, read.openai_api_key) == (
        19000, "tok-123", ("FAST_API_KEY",), "sk-o")


def test_the_settings_round_trip_through_the_environment() -> None:
    settings = BridgeSettings(host="0.0.0.0", port=9, hermes_home="/h", openai_base_url="http://x",
                              openai_api_key="k", model="m", toolsets=("todo", "web"),
                              pool_size=3, clarify_fallback_seconds=1.5 * 3600,
                              shared_memory=True, token="t", key_envs=("A", "B"),
                              log_level="DEBUG", log_format="json")
    assert BridgeSettings.from_env(settings.to_env()) == settings
    assert BridgeSettings.from_env(BridgeSettings().to_env()) == BridgeSettings()


@pytest.mark.parametrize("name", sorted(SERVICE_SECRETS))
def test_a_model_may_not_name_a_secret_of_the_service_as_its_key(name: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        child_key_envs(Settings(), _catalogue("FAST_API_KEY", name))
    assert f"{name} may not be a model's key" in refused.value.message
    with pytest.raises(InvalidInput):
        child_key_envs(Settings(bridge_key_envs=(name,)), _catalogue())


def test_configured_key_names_come_first_then_the_catalogue_s() -> None:
    keys = child_key_envs(Settings(bridge_key_envs=("TEAM_KEY", "FAST_API_KEY")),
                          _catalogue("FAST_API_KEY", "DEEP_KEY"))
    assert keys == ("TEAM_KEY", "FAST_API_KEY", "DEEP_KEY")


@pytest.mark.parametrize(("level", "child"), [("INFO", "WARNING"), ("WARNING", "WARNING"),
                                              ("DEBUG", "DEBUG"), ("ERROR", "ERROR")])
def test_the_child_logs_what_went_wrong_unless_asked_for_more(level: str, child: str) -> None:
    """`serve` reports the child's start and exits itself; the child adds no INFO lines."""
    settings = Settings.from_env({"LOG_LEVEL": level})
    assert child_environment(settings, SERVE_ENV, "tok-123", ())["LOG_LEVEL"] == child
