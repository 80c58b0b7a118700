"""The Messages tab: opening it offers the suggested prompts of SLACK_SUGGESTED_PROMPTS (at
most four); the Home tab gets none; an app Slack refuses them goes without, logged once."""

from __future__ import annotations

import logging

import pytest

from core.runtime.pool import RunPool
from tests.bots.slack.clocks import FastClock
from tests.bots.slack.harness import Harness, running, until
from tests.fakes.slack import FakeSlack
from tests.fakes.slack_payloads import DM_CHANNEL_ID, USER_ID, make_slack_event, new_ts

PROMPTS = ("Summarise this channel", "Review my pull request", "Plan my week", "Explain a log",
           "A fifth, one too many")


async def open_tab(h: Harness, tab: str) -> None:
    event = {"type": "app_home_opened", "user": USER_ID, "channel": DM_CHANNEL_ID, "tab": tab,
             "event_ts": new_ts()}
    assert (await h.post_event(make_slack_event(event))).status_code == 200
    await h.bot.idle()


async def test_opening_the_messages_tab_offers_the_suggested_prompts(
        fake_slack: FakeSlack, fake_pool: RunPool, fast_clock: FastClock,
        caplog: pytest.LogCaptureFixture) -> None:
    async with running(fake_slack, fake_pool, fast_clock, slack_suggested_prompts=PROMPTS) as h:
        await open_tab(h, "home")
        assert not fake_slack.calls_to("assistant.threads.setSuggestedPrompts")
        await open_tab(h, "messages")
        [call] = await fake_slack.wait_for_calls("assistant.threads.setSuggestedPrompts")
        assert call.ok and call.args["channel_id"] == DM_CHANNEL_ID
        shown = fake_slack.workspace.suggested_prompts[(DM_CHANNEL_ID, "")]["prompts"]
        assert [p["message"] for p in shown] == list(PROMPTS[:4])

        fake_slack.refuse("assistant.threads.setSuggestedPrompts", "not_authorized")
        caplog.set_level(logging.WARNING, logger="bots.slack.delivery.sender")
        for _ in range(2):
            await open_tab(h, "messages")
        await until(lambda: len(fake_slack.calls_to("assistant.threads.setSuggestedPrompts")) == 2)
        assert len([r for r in caplog.records if "refuses suggested prompts" in r.message]) == 1
