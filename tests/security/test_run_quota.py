"""Requirement (issue #8 §5): "per-user rate limit on starting runs (configurable) with a clear
message". RUNS_PER_USER_PER_MINUTE, enforced by the run pool for every start, edit and
Regenerate that names a chat user; a refused start writes nothing and tells the user in the
thread (a click: privately) when to try again. Counted in the database, so replicas share one
quota (issue 16 §2). The clock is injected."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from core.agent.bridge.client import BridgeClient
from core.config import Settings
from core.store.models import ChatMessage, Role, RunQuotaBucket
from core.errors import RateLimited
from core.edge.run_quota import RunQuota
from core.runtime.pool import RunPool
from tests.bots.discord.harness import answered, bot_messages, button, mention, running_bot, text_of
from tests.bots.slack.clocks import FastClock
from tests.bots.slack.harness import Harness, running, texts, until
from tests.bridge.harness import RunningBridge
from tests.fakes.clock import ManualClock
from tests.fakes.discordfake import FakeDiscord
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.fakes.slack import FakeSlack
from tests.fakes.slack_payloads import CHANNEL_ID
from tests.support.runtime import FAST, catalogue_for
from tests.fakes.changes import WAIT

PER_MINUTE = 2


@pytest.fixture
def quota_clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def limited(db: str, bridge: RunningBridge, llm: ScriptedLLM, skills_dir: Path,
                  quota_clock: ManualClock) -> AsyncIterator[RunPool]:
    """A pool on the real Bridge that lets each user start PER_MINUTE runs a minute."""
    async with BridgeClient(bridge.url, policy=FAST) as client:
        runs = RunPool(client, catalogue_for(llm, skills_dir),
                       quota=RunQuota(PER_MINUTE, clock=quota_clock))
        await runs.open()
        yield runs
        await runs.close()


@pytest.fixture
async def slack(fake_slack: FakeSlack, limited: RunPool, fast_clock: FastClock
                ) -> AsyncIterator[Harness]:
    async with running(fake_slack, limited, fast_clock) as harness:
        yield harness


async def test_the_setting_has_a_default_and_zero_turns_it_off(db: str) -> None:
    assert Settings().runs_per_user_per_minute == 10
    assert Settings.from_env({"RUNS_PER_USER_PER_MINUTE": "0"}).runs_per_user_per_minute == 0
    off = RunQuota(0)
    for _ in range(1000):
        await off.take("U1")
    assert await RunQuotaBucket.all().count() == 0


@pytest.mark.backend  # the bucket's row, read locked
async def test_the_bucket_refills_evenly_and_says_when(db: str) -> None:
    clock = ManualClock()
    quota = RunQuota(3, clock=clock)
    for _ in range(3):
        await quota.take("U1")
    with pytest.raises(RateLimited) as refused:
        await quota.take("U1")
    assert refused.value.retry_after == 20 and "Try again in 20 s" in refused.value.message
    assert refused.value.code == "rate_limited"
    await quota.take("U2")  # per user
    await quota.take(None)  # no user (the admin API): not counted
    clock.advance(20)
    await quota.take("U1")


@pytest.mark.backend  # the bucket's row, read locked
async def test_two_replicas_count_one_quota_in_the_database(db: str) -> None:
    """Two replicas' quotas (nothing shared but the database) and concurrent starts of one
    user on both: exactly the allowed number goes through."""
    clock = ManualClock()
    replicas = (RunQuota(PER_MINUTE, clock=clock), RunQuota(PER_MINUTE, clock=clock))
    outcomes = await asyncio.gather(*(replicas[n % 2].take("U1") for n in range(8)),
                                    return_exceptions=True)
    assert sum(outcome is None for outcome in outcomes) == PER_MINUTE, outcomes
    assert all(isinstance(o, RateLimited) for o in outcomes if o is not None), outcomes
    clock.advance(30)  # one token back, whichever replica asks
    await replicas[1].take("U1")
    with pytest.raises(RateLimited, match="Try again in 30 s"):
        await replicas[0].take("U1")


@pytest.mark.backend  # the bucket's row, read locked
async def test_full_buckets_are_swept_and_odd_user_ids_are_kept_apart(db: str) -> None:
    clock = ManualClock()
    quota = RunQuota(PER_MINUTE, clock=clock)
    long_a, long_b = "U" * 5000 + "a", "U" * 5000 + "b"  # untrusted: megabytes, NUL, surrogates
    for user in (long_a, long_b, "U\x00\ud800"):
        await quota.take(user)
        await quota.take(user)
    with pytest.raises(RateLimited):
        await quota.take(long_a)
    clock.advance(59)
    assert await quota.sweep() == 0  # not full yet: kept
    clock.advance(2)
    assert await quota.sweep() == 3
    await quota.take(long_a)


async def test_slack_a_user_over_the_limit_is_told_in_the_thread_and_nothing_is_written(
    slack: Harness, llm: ScriptedLLM, quota_clock: ManualClock
) -> None:
    llm.script(*(text_reply(f"answer {n}") for n in range(1, 5)))
    thread = (await slack.event("app_mention", text="one"))["ts"]
    await slack.answered(CHANNEL_ID, thread)
    await slack.event("thread_message", text="two", thread_ts=thread)
    await slack.answered(CHANNEL_ID, thread, count=2)

    await slack.event("thread_message", text="three, too soon", thread_ts=thread)
    refusal = await until(lambda: [m for m in slack.bot_messages(CHANNEL_ID, thread)
                                   if "Try again in 30 s" in (m.text or "") + texts(m)])
    assert "2 runs in the last minute" in texts(refusal[0])
    assert await ChatMessage.filter(role=Role.USER).count() == 2 and len(llm.requests) == 2

    [latest, *_] = sorted((await slack.answered(CHANNEL_ID, thread, count=2)),
                          key=lambda m: m.ts, reverse=True)
    await slack.click(latest, "hermes.answer.regenerate")  # a Regenerate counts too
    await until(lambda: any("Try again in 30 s" in e for e in slack.ephemerals()))
    await slack.bot.idle()
    assert await ChatMessage.filter(role=Role.ASSISTANT).count() == 2

    await slack.event("thread_message", text="another person", thread_ts=thread, user="U0OTHER")
    await slack.answered(CHANNEL_ID, thread, count=3)
    quota_clock.advance(30)
    await slack.event("thread_message", text="four, later", thread_ts=thread)
    await slack.answered(CHANNEL_ID, thread, count=4)
    users = await ChatMessage.filter(role=Role.USER).order_by("id").values_list("content", flat=True)
    assert users == ["one", "two", "another person", "four, later"]


async def test_discord_a_user_over_the_limit_is_told_in_the_thread_and_nothing_is_written(
    fake: FakeDiscord, limited: RunPool, llm: ScriptedLLM, quota_clock: ManualClock
) -> None:
    bob = fake.add_user("bob")
    llm.script(*(text_reply(f"answer {n}") for n in range(1, 5)))
    async with running_bot(fake, limited):
        asked = await fake.send_user_message(mention(fake, "one"))
        thread = int(asked["id"])
        await fake.wait_until(lambda: answered(fake, thread, "answer 1"), WAIT, "answer 1")
        await fake.send_user_message("two", channel_id=thread)
        await fake.wait_until(lambda: answered(fake, thread, "answer 2"), WAIT, "answer 2")

        await fake.send_user_message("three, too soon", channel_id=thread)
        await fake.wait_until(lambda: any("Try again in 30 s" in text_of(m)
                                          for m in bot_messages(fake, thread)), WAIT, "refusal")
        assert await ChatMessage.filter(role=Role.USER).count() == 2 and len(llm.requests) == 2

        last = answered(fake, thread, "answer 2")
        assert last is not None
        click = await fake.click(last["id"], button(last, "Regenerate")["custom_id"])
        await fake.wait_until(lambda: "Try again in 30 s" in _private_reply(fake, click.id),
                              WAIT, "regenerate refused")
        assert await ChatMessage.filter(role=Role.ASSISTANT).count() == 2

        await fake.send_user_message("bob asks", channel_id=thread, author=bob)
        await fake.wait_until(lambda: answered(fake, thread, "answer 3"), WAIT, "bob's answer")
        quota_clock.advance(30)
        await fake.send_user_message("four, later", channel_id=thread)
        await fake.wait_until(lambda: answered(fake, thread, "answer 4"), WAIT, "answer 4")
    users = await ChatMessage.filter(role=Role.USER).order_by("id").values_list("content", flat=True)
    assert users == ["one", "two", "bob asks", "four, later"]


def _private_reply(fake: FakeDiscord, interaction_id: str) -> str:
    """What the bot told the clicker only (ephemeral follow-ups)."""
    record = fake.interaction(interaction_id)
    private = [fake.message(m) for m in record.followup_ids]
    return "\n".join(text_of(m) for m in private if m["flags"] & 64)
