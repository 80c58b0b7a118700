"""The chat platforms `serve` starts: each one whose settings are present, one log line each."""

from __future__ import annotations

import logging
from typing import Protocol

from litestar import Litestar

from core.config import Settings
from core.conversation.vocabulary import Platform as ChatPlatform
from core.edge.platform_links import PlatformLinks
from core.runtime.shards import claims_for
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

        _quiet_the_unused_token_warning()
        link = links.add("slack") if settings.slack_app_token else None  # HTTP: no connection
        slack = SlackBot(settings, parts.pool, parts.catalogue, parts.bridge, link=link,
                         files=parts.files)
        for handler in slack.route_handlers():
            app.register(handler)
        await slack.start()
        started.append(slack)
        if parts.schedules is not None:
            parts.schedules.serve(ChatPlatform.SLACK, slack.scheduled_threads)
        log.info("slack: started (%s)", _slack_mode(settings))
    else:
        log.info("slack: not started (SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET or "
                 "SLACK_APP_TOKEN unset)")
    if settings.discord_token:
        from discord import VoiceClient

        from bots.discord import DiscordBot

        # The bot has no voice: discord.py's warn-once flags for its missing voice libraries.
        VoiceClient.warn_nacl = VoiceClient.warn_dave = False
        shards = claims_for(settings.database_url, settings.run_lease_seconds)
        discord = DiscordBot(settings, parts.pool, parts.catalogue, parts.bridge,
                             link=links.add("discord"), shards=shards, files=parts.files)
        await discord.start()
        started.append(discord)
        if parts.schedules is not None:
            parts.schedules.serve(ChatPlatform.DISCORD, discord.scheduled_threads)
        log.info("discord: started")
    else:
        log.info("discord: not started (DISCORD_TOKEN unset)")
    if parts.schedules is not None:
        parts.schedules.start()  # the scheduled prompts of the platforms started here
    return started


def _slack_mode(settings: Settings) -> str:
    """Socket Mode, or the Request URL to paste into the Slack app's settings."""
    from bots.slack.http import PATH

    if settings.slack_app_token:
        return "Socket Mode"
    url = settings.slack_events_url(PATH)
    where = "Event Subscriptions, Interactivity and Slash Commands"
    if settings.public_url:
        return f"HTTP events: Request URL {url} in the Slack app's {where}"
    return (f"HTTP events at {url}; Slack needs a public https URL that reaches it: set "
            f"PUBLIC_URL (e.g. https://bot.example.com) and paste PUBLIC_URL{PATH} into the "
            f"Slack app's {where}")


class _WithoutUnusedToken(logging.Filter):
    """bolt reads SLACK_BOT_TOKEN from the environment even when given no token, then warns
    that it goes unused: the bot gives bolt a client that carries that very token."""

    def filter(self, record: logging.LogRecord) -> bool:
        from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped

        return record.getMessage() != warning_client_prioritized_and_token_skipped()


def _quiet_the_unused_token_warning() -> None:
    # bolt keeps the filters it finds on the logger it names after its class
    app_log = logging.getLogger("slack_bolt.AsyncApp")
    if not any(isinstance(f, _WithoutUnusedToken) for f in app_log.filters):
        app_log.addFilter(_WithoutUnusedToken())


async def stop_platforms(platforms: list[Platform]) -> None:
    """Stop in reverse order; one that fails to stop is logged, the others still stop."""
    for platform in reversed(platforms):
        try:
            await platform.stop()
        except Exception:  # shutdown goes on: report and continue with the next one
            log.exception("a platform did not stop cleanly")
