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
                                 {"THREAD_CONTEXT_MESSAGES": "201"},
                                 {"HISTORY_ATTACHMENT_BYTES": "-1"},
                                 {"HISTORY_ATTACHMENT_BYTES": "20MiB"},
                                 {"HISTORY_ATTACHMENT_BYTES": str(128 * 1024 * 1024 + 1)},
                                 {"SHOW_USAGE": "dollars"}, {"LIMIT_USER_DAY_TOKENS": "-1"},
                                 {"LIMIT_USER_DAY_TOKENS": "1e6"}, {"LIMIT_CHANNEL_MONTH_COST": "-0.5"},
                                 {"LIMIT_WORKSPACE_DAY_COST": "nan"},
                                 {"LIMIT_WORKSPACE_DAY_COST": "five"},
                                 {"SCHEDULE_TIMEZONE": "Mars/Base"},
                                 {"SCHEDULE_TIMEZONE": "America"}])
def test_bad_values_are_named(env: dict[str, str]) -> None:
    with pytest.raises(InvalidInput, match=next(iter(env))):
        Settings.from_env(env)


def test_schedules_run_in_utc_unless_another_zone_is_named() -> None:
    assert Settings.from_env({}).schedule_timezone == "UTC"
    assert Settings.from_env({"SCHEDULE_TIMEZONE": " Europe/Paris "}).schedule_timezone == (
        "Europe/Paris")


def test_answers_show_no_usage_unless_asked_for_tokens_or_cost() -> None:
    assert Settings.from_env({}).usage_shown == "off"
    assert Settings.from_env({"SHOW_USAGE": "Cost"}).usage_shown == "cost"
    assert Settings.from_env({"SHOW_USAGE": "tokens"}).usage_shown == "tokens"


def test_spend_limits_are_none_unless_set_and_the_unlimited_token_is_a_secret() -> None:
    assert set(Settings.from_env({}).spend_limits.values()) == {0.0}
    settings = Settings.from_env({"LIMIT_USER_DAY_TOKENS": "12000",
                                  "LIMIT_WORKSPACE_MONTH_COST": "49.5",
                                  "ADMIN_UNLIMITED_TOKEN": "op-secret"})
    limits = {k: v for k, v in settings.spend_limits.items() if v}
    assert limits == {("user", "day", "tokens"): 12000.0, ("workspace", "month", "cost"): 49.5}
    assert "op-secret" in settings.secrets()


def test_thread_context_is_twenty_messages_unless_set_and_zero_turns_it_off() -> None:
    assert Settings.from_env({}).thread_context_messages == 20
    assert Settings.from_env({"THREAD_CONTEXT_MESSAGES": "0"}).thread_context_messages == 0


def test_earlier_files_are_resent_up_to_20_mib_unless_set_and_zero_resends_none() -> None:
    assert Settings.from_env({}).history_attachment_bytes == 20 * 1024 * 1024
    assert Settings.from_env({"HISTORY_ATTACHMENT_BYTES": "0"}).history_attachment_bytes == 0


def test_several_bridges_are_a_comma_separated_list_of_urls() -> None:
    settings = Settings.from_env({"HERMES_BRIDGE_URL": "http://b1:18731/, https://b2:1 ,"})
    assert settings.bridge_urls == ("http://b1:18731", "https://b2:1")
    assert Settings.from_env({}).bridge_urls == ("http://127.0.0.1:18731",)


@pytest.mark.parametrize("listed", ["http://b1:1,bridge-2:1", "http://b1:1,http://b1:1", ","])
def test_a_bad_list_of_bridges_is_refused_at_start(listed: str) -> None:
    with pytest.raises(InvalidInput, match="HERMES_BRIDGE_URL"):
        Settings.from_env({"HERMES_BRIDGE_URL": listed})


# Where every setting is documented, and how each document names one: `.env.example` as a
# `KEY=` line, docs/configuration.md as the first cell of a table row.
DOCUMENTS = {".env.example": r"^([A-Z_]+)=", "docs/configuration.md": r"^\| `([A-Z_]+)` \|"}


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_setting_is_documented_once_and_nothing_else_is(document: str) -> None:
    import re
    from collections import Counter
    from dataclasses import fields
    from pathlib import Path

    text = (Path(__file__).parents[2] / document).read_text(encoding="utf-8")
    named = Counter(re.findall(DOCUMENTS[document], text, re.MULTILINE))
    settings = {f.name.upper() for f in fields(Settings)}
    assert not settings - set(named), f"{document} does not document {sorted(settings - set(named))}"
    assert not set(named) - settings, f"{document} documents no setting {sorted(set(named) - settings)}"
    assert not [key for key, count in named.items() if count > 1], f"{document} names a setting twice"
