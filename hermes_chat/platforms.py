"""The chat platforms `serve` starts: each one whose settings are present, one log line each."""

from __future__ import annotations

import logging
from typing import Protocol

from litestar import Litestar

from core.config import Settings
from core.platform_links import PlatformLinks
from hermes_chat.compose import Parts

log = logging.getLogger("hermes_chat.serve")


class Platform(Protocol):
    async def start(self) -> None: ...
    async def stop(self) -> None: ...


async def start_platforms(settings: Settings, parts: Parts, app: Litestar,
                          links: PlatformLinks | None = None) -> list[Platform]:
    """Start Slack (its events route mounted on `app`) and Discord where configured; each
    connection (Socket Mode, the gateway) reports to its entry of `links`."""
    links = links if links is not None else PlatformLinks(settings.platform_down_seconds)
    started: list[Platform] = []
    if settings.slack_bot_token and (settings.slack_signing_secret or settings.slack_app_token):
        from bots.slack import SlackBot

        link = links.add("slack") if settings.slack_app_token else None  # HTTP: no connection
        slack = SlackBot(settings, parts.pool, parts.catalogue, parts.bridge, link=link)
        for handler in slack.route_handlers():
            app.register(handler)
        await slack.start()
        started.append(slack)
        mode = "Socket Mode" if settings.slack_app_token else "HTTP events at /slack/events"
        log.info("slack: started (%s)", mode)
    else:
        log.info("slack: not started (SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET or "
                 "SLACK_APP_TOKEN unset)")
    if settings.discord_token:
        from bots.discord import DiscordBot

        discord = DiscordBot(settings, parts.pool, parts.catalogue, parts.bridge,
                             link=links.add("discord"))
        await discord.start()
        started.append(discord)
        log.info("discord: started")
    else:
        log.info("discord: not started (DISCORD_TOKEN unset)")
    return started


async def stop_platforms(platforms: list[Platform]) -> None:
    """Stop in reverse order; one that fails to stop is logged, the others still stop."""
    for platform in reversed(platforms):
        try:
            await platform.stop()
        except Exception:  # shutdown goes on: report and continue with the next one
            log.exception("a platform did not stop cleanly")
