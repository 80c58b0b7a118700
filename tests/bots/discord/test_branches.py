"""Regenerate, the version switcher and edit-and-branch, on the real Bridge."""

from __future__ import annotations

import asyncio

from core import tree
from core.models import AnswerFeedback, ChatMessage, FeedbackValue, Platform, Role
from core.runtime.pool import RunPool
from tests.bots.discord.harness import (
    answered,
    bot_messages,
    button,
    buttons,
    mention,
    running_bot,
    text_of,
)
from tests.fakes.discordfake import FakeDiscord
from tests.fakes.llm_server import ScriptedLLM, text_reply

WAIT = 15.0


async def test_regenerate_and_the_switcher_show_versions_in_the_same_message(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("Joke one."), text_reply("Joke two."))
    async with running_bot(fake, pool):
        asked = await fake.send_user_message(mention(fake, "tell me a joke"))
        thread = int(asked["id"])
        await fake.wait_until(lambda: answered(fake, thread, "Joke one."), WAIT, "answer 1")
        (answer,) = bot_messages(fake, thread)
        assert "2/2" not in str(answer["components"])
        await fake.click(answer["id"], button(answer, "Regenerate")["custom_id"])
        await fake.wait_until(lambda: answered(fake, thread, "Joke two."), WAIT, "answer 2")
        shown = fake.message(answer["id"])
        assert button(shown, "2/2")["disabled"] and button(shown, "▶")["disabled"]
        await fake.click(answer["id"], button(shown, "◀")["custom_id"])
        await fake.wait_until(lambda: answered(fake, thread, "Joke one."), WAIT, "version 1")
        assert button(fake.message(answer["id"]), "1/2")
        first_active = [m.content for m in await tree.active_branch(1)]
        await fake.click(answer["id"], button(fake.message(answer["id"]), "▶")["custom_id"])
        await fake.wait_until(lambda: answered(fake, thread, "Joke two."), WAIT, "version 2")
    assert [m["id"] for m in bot_messages(fake, thread)] == [answer["id"]], "one message, edited"
    assert first_active == ["tell me a joke", "Joke one."]
    assert [m.content for m in await tree.active_branch(1)] == ["tell me a joke", "Joke two."]


async def test_editing_ones_message_branches_and_the_bot_says_so(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("Four."), text_reply("Six."))
    async with running_bot(fake, pool):
        asked = await fake.send_user_message(mention(fake, "what is 2+2?"))
        thread = int(asked["id"])
        await fake.wait_until(lambda: answered(fake, thread, "Four."), WAIT, "answer")
        await fake.edit_user_message(asked["id"], mention(fake, "what is 3+3?"))
        await fake.wait_until(lambda: answered(fake, thread, "Six."), WAIT, "branch answer")
    old, new = bot_messages(fake, thread)
    assert "Four." in text_of(old) and "New branch: answering your edited message" in text_of(new)
    users = await ChatMessage.filter(role=Role.USER).order_by("id")
    assert [(u.content, u.is_active, u.platform_message_id) for u in users] == [
        ("what is 2+2?", False, asked["id"]), ("what is 3+3?", True, asked["id"])]


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
