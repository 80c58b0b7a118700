"""An edit after a restart, and 👍 / 👎, on the real Bridge. Regenerate, the version switcher
and edit-and-branch are the conversation contract's (tests/bots/contract), on both platforms."""

from __future__ import annotations

import asyncio

from core.runtime.pool import RunPool
from core.store.models import AnswerFeedback, ChatMessage, FeedbackValue, Platform, Role
from tests.bots.discord.harness import (
    answered,
    bot_messages,
    buttons,
    mention,
    running_bot,
)
from tests.fakes.discordfake import FakeDiscord
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.fakes.changes import WAIT


async def test_an_edit_of_a_message_sent_before_a_restart_branches_too(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("Hi."), text_reply("Rome."), text_reply("Madrid."))
    async with running_bot(fake, pool):
        asked = await fake.send_user_message(mention(fake, "hello"))
        thread = int(asked["id"])
        await fake.wait_until(lambda: answered(fake, thread, "Hi."), WAIT, "answer 1")
        follow_up = await fake.send_user_message("capital of Italy?", channel_id=thread)
        await fake.wait_until(lambda: answered(fake, thread, "Rome."), WAIT, "answer 2")
    async with running_bot(fake, pool):  # a new client: its message cache is empty
        await fake.edit_user_message(follow_up["id"], "capital of Spain?")
        await fake.wait_until(lambda: answered(fake, thread, "Madrid."), WAIT, "branch answer")
    branched = answered(fake, thread, "Madrid.")
    assert branched is not None and branched["message_reference"]["message_id"] == follow_up["id"]
    edited = await ChatMessage.filter(role=Role.USER, content="capital of Spain?").get()
    assert edited.platform_message_id == follow_up["id"] and edited.branch_order == 1


async def rated_so(value: FeedbackValue) -> None:
    async with asyncio.timeout(WAIT):
        while not await AnswerFeedback.filter(value=value).exists():
            await asyncio.sleep(0.02)


async def test_thumbs_under_an_answer_store_the_clickers_rating(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("Rate me."))
    async with running_bot(fake, pool):
        asked = await fake.send_user_message(mention(fake, "hello"))
        thread = int(asked["id"])
        await fake.wait_until(lambda: answered(fake, thread, "Rate me."), WAIT, "answer")
        (answer,) = bot_messages(fake, thread)
        thumbs = [b for b in buttons(answer) if b.get("emoji", {}).get("name") in ("👍", "👎")]
        assert [b["emoji"]["name"] for b in thumbs] == ["👍", "👎"]
        for clicked, value in zip(thumbs, (FeedbackValue.GOOD, FeedbackValue.BAD), strict=True):
            await fake.click(answer["id"], clicked["custom_id"])
            await rated_so(value)
    [rating] = await AnswerFeedback.all()
    assert rating.platform == Platform.DISCORD and rating.value == FeedbackValue.BAD
