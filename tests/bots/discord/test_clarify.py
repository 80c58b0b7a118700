"""Clarify questions in Discord: double clicks and restarts (real Bridge, scripted LLM). A
choice, the Custom answer modal and a stopped run's question are the conversation contract's
(tests/bots/contract), on both platforms."""

from __future__ import annotations

from core.store.models import ClarifyPause, MessageStatus
from core.runtime.pool import RunPool
from core.runtime.recovery import recover
from tests.bots.discord.harness import (
    answered,
    bot_messages,
    button,
    buttons,
    ephemeral_replies,
    running_bot,
    text_of,
)
from tests.fakes.discordfake import FakeDiscord
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply
from tests.support.discord import COLOUR, ask
from tests.fakes.changes import WAIT

POST_MESSAGE = "POST /channels/{channel_id}/messages"

async def test_a_second_click_is_told_who_answered_first(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    bob = fake.add_user("bob")
    llm.script(tool_reply(ToolCall("clarify", COLOUR)), text_reply("Noted."))
    async with running_bot(fake, pool, conversation_actions="anyone"):  # bob may answer
        thread, question = await ask(fake)
        blue, red = button(question, "blue")["custom_id"], button(question, "red")["custom_id"]
        alice_click = await fake.click(question["id"], blue)
        bob_click = await fake.click(question["id"], red, user=bob)
        clicks = (alice_click, bob_click)
        await fake.wait_until(lambda: any(ephemeral_replies(fake, c.id) for c in clicks), WAIT)
        await fake.wait_until(lambda: answered(fake, thread, "Noted."), WAIT, "the answer")
        # A stale click, after the edit took the buttons away, is answered too.
        late = await fake.click(question["id"], red, user=bob)
        await fake.wait_until(lambda: ephemeral_replies(fake, late.id), WAIT, "the late refusal")
    pause = await ClarifyPause.get()
    winner = alice_click if pause.answered_by == fake.user["id"] else bob_click
    loser = bob_click if winner is alice_click else alice_click
    expected = f"This question was already answered by <@{pause.answered_by}>: {pause.answer}"
    assert ephemeral_replies(fake, winner.id) == []
    assert ephemeral_replies(fake, loser.id) == ephemeral_replies(fake, late.id) == [expected]
    assert fake.message(fake.interaction(late.id).followup_ids[0])["flags"] & 64
    assert not buttons(fake.message(question["id"]))


async def test_buttons_work_after_a_restart(
    fake: FakeDiscord, pool: RunPool, second_pool: RunPool, llm: ScriptedLLM
) -> None:
    llm.script(tool_reply(ToolCall("clarify", COLOUR)), text_reply("Red it is."))
    async with running_bot(fake, pool):
        thread, question = await ask(fake)
        (live,) = [m for m in bot_messages(fake, thread) if m["id"] != question["id"]]
    await pool.close()
    async with running_bot(fake, second_pool):
        assert await recover(second_pool) == 1
        click = await fake.click(question["id"], button(question, "red")["custom_id"])
        await fake.wait_until(lambda: answered(fake, thread, "Red it is."), WAIT, "the answer")
        await fake.wait_until(lambda: "answered by" in text_of(fake.message(question["id"])), WAIT)
    assert fake.interaction(click.id).response == {"type": 6}, "a choice defers its update"
    assert answered(fake, thread, "Red it is.")["id"] == live["id"], "the same live message"
    assert len(bot_messages(fake, thread)) == 2, "nothing posted twice"


async def test_a_modal_opened_before_a_restart_answers_after_it(
    fake: FakeDiscord, pool: RunPool, second_pool: RunPool, llm: ScriptedLLM
) -> None:
    llm.script(tool_reply(ToolCall("clarify", COLOUR)), text_reply("Purple, noted."))
    async with running_bot(fake, pool):
        thread, question = await ask(fake)
        opened = await fake.click(question["id"], button(question, "Custom answer…")["custom_id"])
        await fake.wait_for_response(opened)
    await pool.close()
    async with running_bot(fake, second_pool):
        await recover(second_pool)
        await fake.submit_modal(opened, {"answer": "purple"})
        await fake.wait_until(lambda: answered(fake, thread, "Purple, noted."), WAIT, "the answer")
    assert (await ClarifyPause.get()).answer == "purple"
    assert second_pool.view((await ClarifyPause.get()).run_id).status == MessageStatus.SUCCESS


async def test_a_question_posted_by_a_process_killed_before_it_stored_where_is_not_posted_again(
    fake: FakeDiscord, pool: RunPool, second_pool: RunPool, llm: ScriptedLLM
) -> None:
    """A replica killed between a question's post and storing its id: the run recovered here
    posts it with the same enforced nonce, so Discord answers with the first message, and the
    answer shows on the one the person clicked."""
    llm.script(tool_reply(ToolCall("clarify", COLOUR)), text_reply("Red it is."))
    async with running_bot(fake, pool):
        thread, question = await ask(fake)
    await pool.close()
    await ClarifyPause.all().update(platform_refs=None)  # where it was posted: never stored
    posts_before = len(fake.calls_to(POST_MESSAGE))
    async with running_bot(fake, second_pool):
        assert await recover(second_pool) == 1
        await fake.wait_until(lambda: len(fake.calls_to(POST_MESSAGE)) > posts_before, WAIT,
                              "the recovered run's post of its question")
        await fake.click(question["id"], button(question, "red")["custom_id"])
        await fake.wait_until(lambda: answered(fake, thread, "Red it is."), WAIT, "the answer")
        await fake.wait_until(lambda: "answered by" in text_of(fake.message(question["id"])), WAIT)
    assert len(bot_messages(fake, thread)) == 2, [text_of(m) for m in bot_messages(fake, thread)]
    refs = (await ClarifyPause.get()).platform_refs["discord"]
    assert refs["message"] == question["id"] and refs["shown"] == "ANSWERED"
