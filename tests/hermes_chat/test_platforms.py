"""`serve` starts each platform whose settings are present, mounts Slack's events route on the
admin server, and stops them all; the others are reported as not started."""

from __future__ import annotations

import json
import logging

import httpx
from litestar import Litestar

from core.config import Settings
from core.edge.platform_links import LinkState, PlatformLinks
from core.runtime.pool import RunPool
from hermes_chat.compose import Parts
from hermes_chat.platforms import start_platforms, stop_platforms
from tests.bots.slack.harness import serving
from tests.fakes.discordfake import FakeDiscord
from tests.fakes.slack import FakeSlack
from tests.fakes.slack_payloads import sign_request


def _parts(settings: Settings, pool: RunPool) -> Parts:
    return Parts(settings, pool.catalogue, pool.bridge, pool)  # type: ignore[arg-type]


async def test_both_platforms_start_and_slack_events_are_served(fake_pool: RunPool) -> None:
    async with FakeSlack() as slack, FakeDiscord() as discord:
        settings = Settings(
            slack_bot_token="xoxb-test", slack_signing_secret="s3cret", slack_api_url=slack.api_url,
            discord_token=discord.token, discord_api_url=discord.api_base,
            discord_gateway_url=discord.gateway_url,
        )
        app = Litestar()
        platforms = await start_platforms(settings, _parts(settings, fake_pool), app)
        try:
            assert len(platforms) == 2
            body = json.dumps({"type": "url_verification", "challenge": "c-42"}).encode()
            async with serving(app) as url, httpx.AsyncClient() as client:
                answer = await client.post(f"{url}/slack/events", content=body,
                                           headers={"Content-Type": "application/json",
                                                    **sign_request(body, "s3cret")})
            assert answer.status_code == 200 and "c-42" in answer.text
            await discord.wait_until(lambda: bool(discord.gateway.connections))
        finally:
            await stop_platforms(platforms)


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


async def test_nothing_configured_starts_nothing_and_says_so(fake_pool: RunPool) -> None:
    lines, logger = Lines(), logging.getLogger("hermes_chat.serve")
    logger.addHandler(lines)
    logger.setLevel(logging.INFO)
    try:
        platforms = await start_platforms(Settings(), _parts(Settings(), fake_pool), Litestar())
    finally:
        logger.removeHandler(lines)
    assert platforms == []
    assert [line.split(":")[0] for line in lines.lines] == ["slack", "discord"]
    assert all("not started" in line for line in lines.lines)


async def test_only_platforms_with_a_connection_get_a_link(fake_pool: RunPool) -> None:
    """Slack over HTTP events has no connection to watch; Discord's gateway has."""
    links = PlatformLinks()
    async with FakeSlack() as slack, FakeDiscord() as discord:
        settings = Settings(
            slack_bot_token="xoxb-test", slack_signing_secret="s3cret", slack_api_url=slack.api_url,
            discord_token=discord.token, discord_api_url=discord.api_base,
            discord_gateway_url=discord.gateway_url,
        )
        platforms = await start_platforms(settings, _parts(settings, fake_pool), Litestar(), links)
        try:
            assert list(links.reports()) == ["discord"]
            await discord.wait_until(lambda: links.reports()["discord"].state is LinkState.OK,
                                     what="the gateway connected")
        finally:
            await stop_platforms(platforms)
