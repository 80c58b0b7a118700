"""Settings from environment-like keys."""

from __future__ import annotations

import pytest

from core.config import DEFAULT_DATABASE_URL, Settings
from core.errors import InvalidInput


def test_nothing_configured_means_the_documented_defaults() -> None:
    settings = Settings.from_env({})
    assert settings.database_url == DEFAULT_DATABASE_URL
    assert (settings.admin_host, settings.admin_port, settings.max_active_runs) == ("127.0.0.1", 8080, 5)
    assert settings.bridge_url == "http://127.0.0.1:18731"
    assert settings.slack_bot_token is None and settings.discord_channels == ()


def test_values_are_converted_and_blank_means_unset() -> None:
    settings = Settings.from_env({
        "ADMIN_PORT": "9000", "DISCORD_CHANNELS": "1, 2,,3", "SLACK_BOT_TOKEN": "  ",
        "BRIDGE_SHARED_MEMORY": "yes", "HERMES_BRIDGE_URL": "http://bridge:1",
    })
    assert settings.admin_port == 9000 and settings.discord_channels == ("1", "2", "3")
    assert settings.slack_bot_token is None and settings.bridge_shared_memory is True
    assert settings.bridge_url == "http://bridge:1"


@pytest.mark.parametrize("env", [{"ADMIN_PORT": "x"}, {"LOG_FORMAT": "xml"}, {"BRIDGE_SHARED_MEMORY": "maybe"},
                                 {"RUN_LEASE_SECONDS": "0"}, {"BRIDGE_POOL_SIZE": "0"},
                                 {"CLARIFY_FALLBACK_HOURS": "-1"}, {"THREAD_CONTEXT_MESSAGES": "-1"},
                                 {"THREAD_CONTEXT_MESSAGES": "201"}])
def test_bad_values_are_named(env: dict[str, str]) -> None:
    with pytest.raises(InvalidInput, match=next(iter(env))):
        Settings.from_env(env)


def test_thread_context_is_twenty_messages_unless_set_and_zero_turns_it_off() -> None:
    assert Settings.from_env({}).thread_context_messages == 20
    assert Settings.from_env({"THREAD_CONTEXT_MESSAGES": "0"}).thread_context_messages == 0


def test_several_bridges_are_a_comma_separated_list_of_urls() -> None:
    settings = Settings.from_env({"HERMES_BRIDGE_URL": "http://b1:18731/, https://b2:1 ,"})
    assert settings.bridge_urls == ("http://b1:18731", "https://b2:1")
    assert Settings.from_env({}).bridge_urls == ("http://127.0.0.1:18731",)


@pytest.mark.parametrize("listed", ["http://b1:1,bridge-2:1", "http://b1:1,http://b1:1", ","])
def test_a_bad_list_of_bridges_is_refused_at_start(listed: str) -> None:
    with pytest.raises(InvalidInput, match="HERMES_BRIDGE_URL"):
        Settings.from_env({"HERMES_BRIDGE_URL": listed})


def test_env_example_documents_every_setting() -> None:
    import re
    from dataclasses import fields
    from pathlib import Path

    example = (Path(__file__).parents[2] / ".env.example").read_text(encoding="utf-8")
    documented = set(re.findall(r"^([A-Z_]+)=", example, re.MULTILINE))
    assert documented == {f.name.upper() for f in fields(Settings)}
