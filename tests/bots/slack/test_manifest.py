"""The app manifest in docs/setup-slack.md is what a person pastes to create the app: it must
parse, and name the route, slash command, events and scopes the adapter relies on."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

import yaml  # litestar's own dependency

from bots.slack.commands import SUBCOMMANDS
from bots.slack.http import PATH

SETUP = Path(__file__).parents[3] / "docs" / "setup-slack.md"
SCOPES = {"app_mentions:read", "chat:write", "commands", "files:write", "files:read",
          "channels:history", "groups:history", "im:history",
          "mpim:history",  # mentions, replies, /hermes, exports, attachments, threads
          "assistant:write"}  # assistant.threads.* (setStatus, setTitle, setSuggestedPrompts)
EVENTS = {"app_mention", "message.channels", "message.groups", "message.im", "message.mpim",
          "app_home_opened", "agent_session_stopped"}  # suggested prompts, the native Stop


def manifest() -> dict[str, Any]:
    [block] = re.findall(r"```yaml\n(.*?)```", SETUP.read_text(encoding="utf-8"), re.S)
    return yaml.safe_load(textwrap.dedent(block))


def test_the_readme_manifest_names_what_the_adapter_needs() -> None:
    app = manifest()
    settings = app["settings"]
    [command] = app["features"]["slash_commands"]
    urls = {command["url"], settings["event_subscriptions"]["request_url"],
            settings["interactivity"]["request_url"]}
    assert urls == {f"https://YOUR_HOST{PATH}"}
    assert command["command"] == "/hermes" and settings["interactivity"]["is_enabled"] is True
    assert all(word in command["usage_hint"] for word in SUBCOMMANDS if word != "help")
    assert set(settings["event_subscriptions"]["bot_events"]) >= EVENTS
    assert set(app["oauth_config"]["scopes"]["bot"]) >= SCOPES
    assert app["features"]["app_home"]["messages_tab_enabled"] is True  # DMs
    assert app["features"]["agent_view"]["agent_description"]  # an agent: sessions, native Stop
