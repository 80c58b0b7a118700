"""Discord across replicas: real DiscordBots on one database share the gateway's shards
(claimed in discord_shard_claim), so each guild's message and each click is handled once; a
stopped replica's shards, and a dead one's (its leases lapse), are taken over and answered
again, the messages sent to the dead one's shards meanwhile too. Without claims (SQLite's one
replica) one bot connects every shard."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import discord
import pytest

from bots.discord import DiscordBot
from bots.discord.bot import intents
from bots.discord.supervisor import gate_parsers
from core.agent.bridge.client import BridgeClient
from core.agent.catalogue import Catalogue
from core.chat import sessions
from core.conversation.refusals import BUSY
from core.runtime.pool import RunPool
from core.runtime.shards import ShardClaims
from core.store.models import ChatMessage, ConversationBinding, DiscordShardClaim, Role, utc_now
from tests.bots.discord.harness import (
    answered,
    bot_messages,
    button,
    fast_limiter,
    mention,
    settings_for,
    text_of,
)
from tests.bridge.harness import wait_until
from tests.fakes.discordfake import FakeDiscord
from tests.fakes.fake_bridge import FakeBridge
from tests.support.discord import MODELS
from tests.support.runtime import FAST
from tests.fakes.changes import WAIT

pytestmark = pytest.mark.backend  # the replicas' shard claims: leases in the database

TTL = timedelta(seconds=4)  # claims renewed every second; a shard counts as held for 3
BUSY_WORDS = BUSY[:40]
GET_CHANNEL = "GET /channels/{channel_id}"


class Clock:
    """The wall clock of the surviving replicas: moved on to let a dead one's leases lapse."""

    def __init__(self) -> None:
        self.offset = timedelta(0)

    def __call__(self):
        return utc_now() + self.offset


class Replica:
    def __init__(self, pool: RunPool, bot: DiscordBot) -> None:
        self.pool, self.bot = pool, bot

    @property
    def shards(self) -> frozenset[int]:
        assert self.bot.fleet is not None
        return self.bot.fleet.connected

    async def kill(self) -> None:
        """Dies: its shard clients go, nothing is released (its leases lapse)."""
        assert self.bot.fleet is not None
        self.bot.fleet.stop()
        with contextlib.suppress(Exception):
            await self.bot._gateway  # noqa: SLF001 - the fleet's task, ended without release


@contextlib.asynccontextmanager
async def replicas(count: int, fake: FakeDiscord, bridge: FakeBridge, skills: Path,
                   clock: Clock, **settings: object) -> AsyncIterator[list[Replica]]:
    """`count` replicas (a pool and a Discord adapter each) started together on one database."""
    async with contextlib.AsyncExitStack() as stack:
        started: list[Replica] = []
        for _ in range(count):
            client = await stack.enter_async_context(BridgeClient(bridge.url, policy=FAST))
            pool = RunPool(client, Catalogue(MODELS, skills), max_active_runs=5)
            await pool.open()
            stack.push_async_callback(pool.close)
            bot = DiscordBot(settings_for(fake, **settings), pool, pool.catalogue, pool.bridge,
                             fast_limiter(), client_options={"guild_ready_timeout": 0.05},
                             shards=lambda n: ShardClaims(n, ttl=TTL, clock=clock))
            stack.push_async_callback(bot.stop)
            started.append(Replica(pool, bot))
        await asyncio.gather(*(r.bot.start() for r in started))
        await asyncio.gather(*(r.bot.wait_until_ready(WAIT) for r in started))
        yield started


def guilds_on_shards(fake: FakeDiscord, count: int) -> list[int]:
    """One guild (its #general) on each of `count` shards; GET /gateway/bot recommends `count`."""
    fake.gateway.shard_count = count
    return [fake.add_guild(f"Shard {s}", shard=(s, count)) for s in range(count)]


def connected_shards(fake: FakeDiscord) -> list[int]:
    """The shards with a live gateway session, each as often as it has one."""
    return sorted(s.shard[0] for s in fake.gateway.live_sessions())


def no_busy_reply(fake: FakeDiscord, channels: list[int]) -> bool:
    seen = [text_of(m) for c in channels for m in bot_messages(fake, c)]
    seen += [text_of(m) for c in channels for t in fake.threads_of(c) for m in bot_messages(fake, t["id"])]
    return not [t for t in seen if BUSY_WORDS in t]


async def ask_each(fake: FakeDiscord, channels: list[int], words: str) -> list[int]:
    """A mention in each channel; once each is answered, the threads (one bot message each)."""
    asked = [await fake.send_user_message(mention(fake, f"{words} {c}"), channel_id=c) for c in channels]
    threads = [int(m["id"]) for m in asked]
    for thread in threads:
        await fake.wait_until(lambda t=thread: answered(fake, t, "done "), WAIT, f"answer in {thread}")
    for thread in threads:
        assert len(bot_messages(fake, thread)) == 1, text_of(bot_messages(fake, thread)[-1])
    return threads


async def test_three_replicas_share_the_shards_and_answer_each_message_once(
    db: str, fake: FakeDiscord, fake_bridge: FakeBridge, skills_dir: Path
) -> None:
    channels = guilds_on_shards(fake, 3)
    async with replicas(3, fake, fake_bridge, skills_dir, Clock()) as three:
        await fake.wait_until(lambda: connected_shards(fake) == [0, 1, 2], WAIT, "every shard once")
        assert sorted(len(r.shards) for r in three) == [1, 1, 1]  # started together: one each
        threads = await ask_each(fake, channels, "hello from")
        answer = bot_messages(fake, threads[1])[0]
        regenerate = button(answer, "Regenerate")["custom_id"]
        click = await fake.click(answer["id"], regenerate)
        await fake.wait_until(lambda: fake.interaction(click.id).response, WAIT, "the click answered")
        await wait_until(lambda: len(fake_bridge.runs) == 4, WAIT)  # the regenerated answer's run
        await fake.wait_until(lambda: answered(fake, threads[1], f"done {_last_run(fake_bridge)}"),
                              WAIT, "the regenerated answer")
        assert connected_shards(fake) == [0, 1, 2]

    assert no_busy_reply(fake, channels)
    assert len(fake.interaction(click.id).callbacks) == 1  # handled by one replica
    assert await ChatMessage.filter(role=Role.ASSISTANT).count() == 4
    assert await DiscordShardClaim.all().count() == 0  # each replica let its shards go at stop


async def test_a_stopped_and_a_dead_replicas_shards_are_taken_over(
    db: str, fake: FakeDiscord, fake_bridge: FakeBridge, skills_dir: Path
) -> None:
    channels = guilds_on_shards(fake, 3)
    clock = Clock()
    async with replicas(3, fake, fake_bridge, skills_dir, clock) as (a, b, c):
        await fake.wait_until(lambda: connected_shards(fake) == [0, 1, 2], WAIT, "every shard once")
        (c_shard,) = c.shards
        await c.bot.stop()  # a clean stop releases the claims: taken over at the next step
        await fake.wait_until(lambda: connected_shards(fake) == [0, 1, 2] and c_shard in a.shards | b.shards,
                              WAIT, f"shard {c_shard} taken over")
        await ask_each(fake, [channels[c_shard]], "after a stop")

        b_shards = b.shards
        earlier = await ask_each(fake, [channels[s] for s in sorted(b_shards)], "before a death")
        await b.kill()
        assert connected_shards(fake) == sorted(a.shards)  # the dead one's sessions are gone
        assert not a.shards & b_shards  # B's claims are live: A waits for them to lapse
        for thread in earlier:  # nobody holds the shard: Discord never sends these again
            await fake.send_user_message(f"and then? {thread}", channel_id=thread)
        clock.offset = TTL + timedelta(seconds=1)  # B's leases lapse on A's clock
        await fake.wait_until(lambda: a.shards == {0, 1, 2} and connected_shards(fake) == [0, 1, 2],
                              WAIT, "the dead replica's shards taken over")
        for thread in earlier:  # read at the taken-over shard's READY (catch_up.py)
            await fake.wait_until(lambda t=thread: len([m for m in bot_messages(fake, t)
                                                        if "done " in text_of(m)]) == 2,
                                  WAIT, f"the message sent meanwhile answered in {thread}")
        await ask_each(fake, [channels[s] for s in sorted(b_shards)], "after a death")

    assert no_busy_reply(fake, channels)


@pytest.mark.parametrize("setting", [2, 0])
async def test_without_claims_one_bot_connects_every_shard(
    db: str, fake: FakeDiscord, fake_bridge: FakeBridge, skills_dir: Path, setting: int
) -> None:
    """SQLite's one replica, DISCORD_SHARD_COUNT=2 or Discord recommending 2: both shards,
    no table."""
    channels = guilds_on_shards(fake, 2)
    async with BridgeClient(fake_bridge.url, policy=FAST) as client:
        pool = RunPool(client, Catalogue(MODELS, skills_dir))
        await pool.open()
        bot = DiscordBot(settings_for(fake, discord_shard_count=setting), pool, pool.catalogue,
                         pool.bridge, fast_limiter(), client_options={"guild_ready_timeout": 0.05})
        await bot.start()
        try:
            await bot.wait_until_ready(WAIT)
            await fake.wait_until(lambda: connected_shards(fake) == [0, 1], WAIT, "both shards")
            threads = await ask_each(fake, channels, "unsharded db")
            (binding,) = await ConversationBinding.filter(thread=str(threads[1]))
            await sessions.rename_session(binding.session_id, "Renamed on shard one")
            await fake.send_user_message("and now?", channel_id=threads[1])
            await fake.wait_until(lambda: fake.channel(threads[1])["name"] == "Renamed on shard one",
                                  WAIT, "the thread renamed after its new title")
        finally:
            await bot.stop()
            await pool.close()
    assert await DiscordShardClaim.all().count() == 0
    # the main client has no gateway: a thread's name is read from its shard's cache, not
    # fetched once per run
    assert fake.calls_to(GET_CHANNEL) == [], [c.path for c in fake.calls_to(GET_CHANNEL)]


def _last_run(bridge: FakeBridge) -> str:
    return list(bridge.runs)[-1]


async def test_a_shard_not_held_has_every_dispatch_dropped(fake: FakeDiscord) -> None:
    """The gate of a shard client: while its replica does not hold the shard (a lease it
    could not renew), nothing the socket still delivers is handled."""
    held, asked = False, []
    seen: list[str] = []
    client = discord.Client(intents=intents(), guild_ready_timeout=0.05)

    def allowed() -> bool:
        asked.append(held)
        return held

    gate_parsers(client, allowed)

    @client.event
    async def on_message(message: discord.Message) -> None:
        seen.append(message.content)

    async with fake.connected(client):
        before = len(asked)  # GUILD_CREATE was asked too (and dropped)
        await fake.send_user_message("while not held")
        await fake.wait_until(lambda: len(asked) > before, WAIT, "the first message at the gate")
        held = True
        await fake.send_user_message("once held")
        await fake.wait_until(lambda: seen, WAIT, "the second message")
    assert seen == ["once held"]


async def test_a_shard_refused_for_good_ends_the_sharded_gateway_saying_why(
    db: str, fake_bridge: FakeBridge, skills_dir: Path
) -> None:
    """Message Content not enabled (4014): as unsharded, start-up says so instead of hanging."""
    async with FakeDiscord(privileged_intents=False) as fake, fake.patch_discord(), \
            BridgeClient(fake_bridge.url, policy=FAST) as client:
        pool = RunPool(client, Catalogue(MODELS, skills_dir))
        await pool.open()
        bot = DiscordBot(settings_for(fake), pool, pool.catalogue, pool.bridge, fast_limiter(),
                         client_options={"guild_ready_timeout": 0.05},
                         shards=lambda n: ShardClaims(n, ttl=TTL))
        await bot.start()
        try:
            with pytest.raises(discord.PrivilegedIntentsRequired):
                await bot.wait_until_ready(WAIT)
        finally:
            await bot.stop()
            await pool.close()
    assert await DiscordShardClaim.all().count() == 0
