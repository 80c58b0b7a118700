"""The supervised gateway connection against the fake gateway: a dispatch discord.py cannot
parse is dropped and the bot keeps answering; a dropped socket is resumed; whatever else ends
the connection is followed by a new IDENTIFY; 4004 / 4014 stop it and health says why; health
turns 503 while the gateway is down past PLATFORM_DOWN_SECONDS and 200 again after."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import discord
import httpx
import pytest

from admin.app import create_app
from admin.services import AdminServices
from bots.discord.supervisor import FATAL_CLOSE_CODES
from core.config import Settings
from core.edge.backoff import Backoff
from core.edge.platform_links import LinkState, PlatformLink, PlatformLinks
from core.runtime.pool import RunPool
from tests.admin.server import serving
from tests.bots.discord.harness import answered, mention, running_bot
from tests.fakes import discord_payloads as dp
from tests.fakes.clock import ManualClock
from tests.fakes.discordfake import FakeDiscord
from tests.fakes.discordfake.gateway import IDENTIFY, RESUME
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.fakes.changes import WAIT

QUICK = Backoff(base=0.05, cap=0.05)  # the supervisor's pause before it connects again
Payload = dict[str, Any]


def partial_message_update(fake: FakeDiscord) -> tuple[str, Payload]:
    embed = dp.make_embed(title="A link preview", url="https://example.org/")
    return "MESSAGE_UPDATE", dp.make_partial_message_update(
        id=dp.snowflake(), channel_id=fake.channel_id, guild_id=fake.guild_id, embeds=[embed])


def reaction_by_a_member_without_flags(fake: FakeDiscord) -> tuple[str, Payload]:
    member = dp.without(dp.make_member(fake.user), "flags")
    return "MESSAGE_REACTION_ADD", dp.make_reaction_add(
        user_id=fake.user["id"], channel_id=fake.channel_id, message_id=dp.snowflake(),
        guild_id=fake.guild_id, member=member)


async def answers(fake: FakeDiscord, llm: ScriptedLLM, text: str) -> None:
    """A mention is answered (in the thread it opens)."""
    llm.script(text_reply(text))
    asked = await fake.send_user_message(mention(fake, "are you there?"))
    await fake.wait_until(lambda: answered(fake, int(asked["id"]), text), WAIT, "an answer")


def link_is(link: PlatformLink, state: LinkState, reconnects: int = 0) -> Callable[[], bool]:
    def check() -> bool:
        report = link.report()
        return report.state is state and report.reconnects == reconnects
    return check


@asynccontextmanager
async def health_of(pool: RunPool, links: PlatformLinks) -> AsyncIterator[httpx.AsyncClient]:
    """The admin API of this pool and these platform links, served for real."""
    services = AdminServices(pool.bridge, pool.catalogue, pool, platforms=links)
    async with serving(create_app(Settings(), services)) as url, \
            httpx.AsyncClient(base_url=url, timeout=WAIT) as client:
        yield client


@pytest.mark.parametrize("unparseable", [partial_message_update, reaction_by_a_member_without_flags])
async def test_a_dispatch_discord_py_cannot_parse_is_dropped_and_the_bot_keeps_answering(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM, caplog: pytest.LogCaptureFixture,
    unparseable: Callable[[FakeDiscord], tuple[str, Payload]],
) -> None:
    caplog.set_level(logging.DEBUG, logger="bots.discord.supervisor")
    event, payload = unparseable(fake)
    async with running_bot(fake, pool) as bot:
        await fake.dispatch(event, payload)
        await fake.wait_until(lambda: bot.link.report().dropped == 1, WAIT, "the event dropped")
        await answers(fake, llm, "Still here.")
        assert bot.link.report().state is LinkState.OK
    # the same connection all along: nothing reconnected
    assert len(fake.gateway.connections) == 1 and len(fake.gateway.received(IDENTIFY)) == 1
    (dropped,) = [r for r in caplog.records if "dropped" in r.getMessage()]
    assert f"dropped a {event} dispatch" in dropped.getMessage()
    assert "KeyError" in dropped.getMessage()
    # a payload we cannot use is said once, at debug, with no traceback (issue 18)
    assert dropped.levelno == logging.DEBUG and dropped.exc_info is None


@pytest.mark.parametrize("code", [1006, 4000])
async def test_a_dropped_socket_is_resumed_and_the_bot_answers(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM, code: int
) -> None:
    async with running_bot(fake, pool) as bot:
        await fake.disconnect(code=code, hold=True)
        await fake.wait_until(link_is(bot.link, LinkState.RECONNECTING), WAIT, "disconnected")
        assert bot.link.report().reason == f"disconnected (close code {code})"
        fake.release_gateway()
        await fake.wait_until(link_is(bot.link, LinkState.OK, reconnects=1), WAIT, "resumed")
        await answers(fake, llm, "Back again.")
    assert len(fake.gateway.received(RESUME)) == 1 and len(fake.gateway.received(IDENTIFY)) == 1
    assert fake.gateway.sent("RESUMED")


async def test_an_error_that_ends_the_connection_is_logged_and_followed_by_a_new_identify(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM, caplog: pytest.LogCaptureFixture
) -> None:
    """A READY without its session id fails in discord.py's gateway loop itself (not in a
    parser), which ends `connect()`: the supervisor logs why and connects again."""
    caplog.set_level(logging.WARNING, logger="bots.discord.supervisor")
    async with running_bot(fake, pool, reconnect=QUICK) as bot:
        await fake.dispatch("READY", {})
        await fake.wait_until(link_is(bot.link, LinkState.OK, reconnects=1), WAIT, "identified")
        await answers(fake, llm, "A new session.")
    assert len(fake.gateway.received(IDENTIFY)) == 2 and len(fake.gateway.connections) == 2
    (ended,) = [r for r in caplog.records if "connecting again" in r.getMessage()]
    assert "KeyError: 'session_id'" in ended.getMessage() and ended.exc_info is not None


async def test_4004_stops_the_gateway_and_health_says_why(
    fake: FakeDiscord, pool: RunPool, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="bots.discord.supervisor")
    clock = ManualClock()
    links = PlatformLinks(down_after=60, clock=clock)
    down = {"state": "down", "reason": FATAL_CLOSE_CODES[4004]}
    async with running_bot(fake, pool, link=links.add("discord"), reconnect=QUICK) as bot, \
            health_of(pool, links) as http:
        await fake.disconnect(code=4004)
        await fake.wait_until(lambda: not bot.gateway_running, WAIT, "the gateway to stop")
        first = await http.get("/api/health")
        assert (first.status_code, first.json()["platforms"]) == (200, {"discord": down})
        clock.advance(61)
        later = await http.get("/api/health")
        assert (later.status_code, later.json()["platforms"]) == (503, {"discord": down})
        assert later.json()["status"] == "degraded"
    assert bot.client.is_closed() and len(fake.gateway.connections) == 1  # no reconnect loop
    assert "not reconnecting: authentication failed (close code 4004)" in caplog.text


async def test_4014_at_start_shows_down_with_the_reason(fake_runs: RunPool) -> None:
    link = PlatformLink()
    async with FakeDiscord(privileged_intents=False) as fake, fake.patch_discord():
        with pytest.raises(discord.PrivilegedIntentsRequired):
            async with running_bot(fake, fake_runs, link=link, reconnect=QUICK):
                pass
        assert len(fake.gateway.received(IDENTIFY)) == 1
    assert (link.state, link.report().reason) == (LinkState.DOWN, FATAL_CLOSE_CODES[4014])


async def test_health_is_503_while_the_gateway_is_down_past_the_setting_and_200_after(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    clock = ManualClock()
    links = PlatformLinks(down_after=30, clock=clock)
    async with running_bot(fake, pool, link=links.add("discord")) as bot, \
            health_of(pool, links) as http:
        await fake.wait_until(link_is(bot.link, LinkState.OK), WAIT, "connected")
        up = await http.get("/api/health")
        assert up.status_code == 200
        assert up.json() == {"status": "ok", "database": "ok", "bridge": "ok",
                             "platforms": {"discord": {"state": "ok", "reason": None}}}

        await fake.disconnect(code=4000, hold=True)  # it cannot come back until released
        await fake.wait_until(link_is(bot.link, LinkState.RECONNECTING), WAIT, "disconnected")
        clock.advance(29)
        brief = await http.get("/api/health")
        assert (brief.status_code, brief.json()["status"]) == (200, "degraded")
        reconnecting = {"state": "reconnecting", "reason": "disconnected (close code 4000)"}
        assert brief.json()["platforms"] == {"discord": reconnecting}
        clock.advance(2)
        past = await http.get("/api/health")
        assert (past.status_code, past.json()["platforms"]) == (503, {"discord": reconnecting})

        fake.release_gateway()
        await fake.wait_until(link_is(bot.link, LinkState.OK, reconnects=1), WAIT, "resumed")
        again = await http.get("/api/health")
        assert (again.status_code, again.json()["status"]) == (200, "ok")
        await answers(fake, llm, "Back after the outage.")
