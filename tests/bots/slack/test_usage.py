"""What a person sees of the agent's spend in Slack: the answer's footer (SHOW_USAGE), and
`/hermes usage` with their own limits."""

from __future__ import annotations

from pathlib import Path

from core.runtime.pool import RunPool
from core.store.models import LimitPeriod, LimitScope, LimitUnit
from core.usage.limits import SpendLimits
from tests.bridge.harness import RunningBridge
from tests.bots.slack.clocks import FastClock
from tests.bots.slack.harness import running, texts
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply
from tests.fakes.slack import FakeSlack
from tests.fakes.slack_payloads import CHANNEL_ID
from tests.support.runtime import PRICE, catalogue_for, opened_pool

TODO = {"todos": [{"id": "1", "content": "add up", "status": "in_progress"}]}


async def test_the_answers_footer_shows_its_tokens_and_cost(
    fake_slack: FakeSlack, priced_pool: RunPool, fast_clock: FastClock, llm: ScriptedLLM
) -> None:
    llm.script(tool_reply(ToolCall("todo", TODO)), text_reply("Added up."))
    async with running(fake_slack, priced_pool, fast_clock, show_usage="cost") as h:
        thread = (await h.event("app_mention", text="add up"))["ts"]
        [done] = await h.answered(CHANNEL_ID, thread)
    assert "model scripted-model · 220 tokens (200 in, 20 out) · $0.00056" in texts(done)


async def test_the_footer_shows_tokens_only_when_asked_for_tokens(
    fake_slack: FakeSlack, priced_pool: RunPool, fast_clock: FastClock, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("One."), text_reply("Two."))
    async with running(fake_slack, priced_pool, fast_clock, show_usage="tokens") as h:
        thread = (await h.event("app_mention", text="count"))["ts"]
        [done] = await h.answered(CHANNEL_ID, thread)
        assert texts(done).endswith("model scripted-model · 110 tokens (100 in, 10 out)")
    async with running(fake_slack, priced_pool, fast_clock) as h:  # SHOW_USAGE off: the default
        thread = (await h.event("app_mention", text="again", ts="1700000100.000001"))["ts"]
        [done] = await h.answered(CHANNEL_ID, thread)
        assert "tokens" not in texts(done)


async def test_hermes_usage_tells_a_person_their_own_spend_today_and_this_month(
    fake_slack: FakeSlack, priced_pool: RunPool, fast_clock: FastClock, llm: ScriptedLLM
) -> None:
    llm.script(tool_reply(ToolCall("todo", TODO)), text_reply("Added up."))
    async with running(fake_slack, priced_pool, fast_clock) as h:
        nothing = (await h.command("usage"))["text"]
        thread = (await h.event("app_mention", text="add up"))["ts"]
        await h.answered(CHANNEL_ID, thread)
        mine = (await h.command("usage"))["text"]
        theirs = (await h.command("usage", user="U0OTHER"))["text"]
    assert "*Today:* nothing yet; resets at midnight UTC (in " in nothing
    spent = "2 model calls · 220 tokens (200 in, 20 out) · $0.00056"
    assert f"*Today:* {spent}; resets at midnight UTC" in mine
    assert f"*This month:* {spent}; resets " in mine
    assert "*Today:* nothing yet" in theirs  # their own, not the channel's


async def test_hermes_usage_names_the_persons_own_limits(
    fake_slack: FakeSlack, db: str, bridge: RunningBridge, llm: ScriptedLLM, skills_dir: Path,
    fast_clock: FastClock,
) -> None:
    llm.script(text_reply("One."))
    limits = SpendLimits({(LimitScope.USER, LimitPeriod.DAY, LimitUnit.TOKENS): 1000,
                          (LimitScope.CHANNEL, LimitPeriod.MONTH, LimitUnit.COST): 5.0})
    async with opened_pool(bridge.url, catalogue_for(llm, skills_dir, PRICE), limits=limits) as runs, \
            running(fake_slack, runs, fast_clock) as h:
        thread = (await h.event("app_mention", text="count"))["ts"]
        await h.answered(CHANNEL_ID, thread)
        mine = (await h.command("usage"))["text"]
    assert "*Your limits:* 1,000 tokens a day: 110 tokens used" in mine  # a channel's is not theirs
