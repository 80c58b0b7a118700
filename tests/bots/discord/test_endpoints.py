"""DISCORD_API_URL and DISCORD_GATEWAY_URL alone point the bot at another Discord (here the
fake, without its own patch), and discord.py's defaults come back when the bot stops."""

from __future__ import annotations

import discord

from core.edge.ratelimit import RateLimiter
from core.runtime.pool import RunPool
from tests.bots.discord.harness import answered, mention, running_bot
from tests.fakes.discordfake import FakeDiscord


async def test_the_settings_alone_redirect_rest_and_gateway(fake_runs: RunPool) -> None:
    defaults = discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
    async with FakeDiscord() as fake:
        async with running_bot(fake, fake_runs, limiter=RateLimiter()):
            assert discord.http.Route.BASE == fake.api_base
            asked = await fake.send_user_message(mention(fake, "hello"))
            await fake.wait_until(lambda: answered(fake, asked["id"], "done"), 10.0, "the answer")
        assert fake.gateway.connections and fake.calls_to("GET /users/@me")
    assert (discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY) == defaults
