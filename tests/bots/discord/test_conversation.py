"""Conversations on the real Bridge with a scripted LLM: threads from mentions, DMs, replays."""

from __future__ import annotations

from core.conversation.refusals import NO_WORDS
from core.runtime.pool import RunPool
from core.store.models import ChatMessage, ChatSession, ConversationBinding, Role
from tests.bots.discord.harness import (
    answered,
    bot_messages,
    mention,
    reply_of,
    running_bot,
    text_of,
)
from tests.fakes import discord_payloads as dp
from tests.fakes.discordfake import FakeDiscord
from tests.fakes.llm_server import ScriptedLLM, request_text, text_reply
from tests.fakes.changes import WAIT


async def test_a_mention_opens_a_thread_and_the_next_messages_continue_it(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    """Two turns in the thread a mention opened; a third one mentions the bot again inside
    the thread, which continues the same conversation (no second thread, no new session)."""
    llm.script(text_reply("Paris is the capital of France."), text_reply("About 2.1 million people."),
               text_reply("Lyon is second."))
    async with running_bot(fake, pool):
        asked = await fake.send_user_message(mention(fake, "What is the capital of France?"))
        thread = int(asked["id"])
        await fake.wait_until(lambda: answered(fake, thread, "Paris is the capital"), WAIT, "answer 1")
        follow_up = await fake.send_user_message("How many people live there?", channel_id=thread)
        await fake.wait_until(lambda: answered(fake, thread, "2.1 million"), WAIT, "answer 2")
        again = await fake.send_user_message(mention(fake, "and the next city?"), channel_id=thread)
        await fake.wait_until(lambda: answered(fake, thread, "Lyon is second."), WAIT, "answer 3")

    assert fake.channel(thread)["name"] == "What is the capital of France?"
    first, second, _ = bot_messages(fake, thread)
    assert "0 tool calls · model scripted-model" in text_of(first) and first["components"]
    assert second["message_reference"]["message_id"] == follow_up["id"]
    (binding,) = await ConversationBinding.all()
    assert (binding.channel, binding.thread) == (str(fake.channel_id), str(thread))
    assert await ChatSession.all().count() == 1 and len(fake.threads_of(fake.channel_id)) == 1
    users = await ChatMessage.filter(role=Role.USER).order_by("id")
    assert [u.platform_message_id for u in users] == [asked["id"], follow_up["id"], again["id"]]
    assert "Paris is the capital of France." in request_text(llm.requests[1])
    assert "About 2.1 million people." in request_text(llm.requests[2])
    assert fake.rejected == []


async def test_a_dm_is_one_conversation_until_hermes_new(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("Hello in private."), text_reply("Still me."), text_reply("A fresh start."))
    dm = fake.dm_channel_id()
    async with running_bot(fake, pool):
        first = await fake.send_user_message("hi there", channel_id=dm)
        await fake.wait_until(lambda: answered(fake, dm, "Hello in private."), WAIT, "answer 1")
        await fake.send_user_message("again", channel_id=dm)
        await fake.wait_until(lambda: answered(fake, dm, "Still me."), WAIT, "answer 2")
        before_new = await ConversationBinding.all().values_list("session_id", flat=True)
        await reply_of(fake, await fake.run_command("hermes", "new", channel_id=dm))
        await fake.send_user_message("who are you?", channel_id=dm)
        await fake.wait_until(lambda: answered(fake, dm, "A fresh start."), WAIT, "answer 3")
    assert before_new == [1], "both messages went to one conversation"
    (binding,) = await ConversationBinding.all()
    assert (binding.workspace, binding.channel, binding.thread, binding.session_id) == (
        "dm", str(dm), "", 2)
    assert bot_messages(fake, dm)[0]["message_reference"]["message_id"] == first["id"]
    sessions = await ChatMessage.filter(role=Role.USER).order_by("id").values_list(
        "session_id", flat=True)
    assert sessions == [1, 1, 2]
    assert "Hello in private." in request_text(llm.requests[1])
    assert "Hello in private." not in request_text(llm.requests[2]), "the new one starts empty"


async def test_a_mention_in_an_existing_thread_binds_it_and_then_no_mention_is_needed(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    thread = int(fake.world.ids.next())
    owner = fake.user["id"]
    fake.world.add_channel(dp.make_thread(thread, fake.guild_id, fake.channel_id, owner, "ideas"))
    llm.script(text_reply("First answer."), text_reply("Second answer."))
    async with running_bot(fake, pool):
        await fake.send_user_message("just people talking", channel_id=thread)
        await fake.send_user_message(mention(fake, "what do you think?"), channel_id=thread)
        await fake.wait_until(lambda: answered(fake, thread, "First answer."), WAIT, "answer 1")
        await fake.send_user_message("and now?", channel_id=thread)
        await fake.wait_until(lambda: answered(fake, thread, "Second answer."), WAIT, "answer 2")
    (binding,) = await ConversationBinding.all()
    assert (binding.channel, binding.thread) == (str(fake.channel_id), str(thread))
    users = await ChatMessage.filter(role=Role.USER).order_by("id").values_list("content", flat=True)
    assert users == ["what do you think?", "and now?"]


async def test_a_resume_replay_of_a_mention_does_not_start_a_second_run(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("Only once."), text_reply("Second turn."))
    async with running_bot(fake, pool):
        asked = await fake.send_user_message(mention(fake, "say it once"))
        thread = int(asked["id"])
        await fake.wait_until(lambda: answered(fake, thread, "Only once."), WAIT, "answer")
        created = next(f for f in fake.gateway.sent("MESSAGE_CREATE") if f.d["id"] == asked["id"])
        await fake.disconnect(redeliver=fake.gateway.session.seq - created.s + 1, hold=True)
        fake.release_gateway()
        await fake.wait_until(lambda: fake.gateway.received(6), WAIT, "a RESUME")
        await fake.send_user_message("next", channel_id=thread)
        await fake.wait_until(lambda: answered(fake, thread, "Second turn."), WAIT, "answer 2")
    replayed = [f for f in fake.gateway.sent("MESSAGE_CREATE") if f.d["id"] == asked["id"]]
    assert len(replayed) == 2, "the fake replayed the mention"
    assert await ChatMessage.filter(role=Role.ASSISTANT).count() == 2
    assert len(llm.requests) == 2 and len(fake.threads_of(fake.channel_id)) == 1


async def test_a_channel_outside_discord_channels_is_ignored(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    allowed = fake.add_text_channel("hermes")
    llm.script(text_reply("Answered where allowed."))
    async with running_bot(fake, pool, channels=(str(allowed),)):
        await fake.send_user_message(mention(fake, "hello from general"))
        asked = await fake.send_user_message(mention(fake, "hello from hermes"), channel_id=allowed)
        await fake.wait_until(lambda: answered(fake, asked["id"], "Answered where allowed."), WAIT)
    assert fake.threads_of(fake.channel_id) == [] and bot_messages(fake, fake.channel_id) == []
    assert len(llm.requests) == 1 and await ConversationBinding.all().count() == 1


async def test_a_bare_mention_gets_a_greeting_not_a_run(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    async with running_bot(fake, pool):
        asked = await fake.send_user_message(mention(fake, ""))
        await fake.wait_until(lambda: bot_messages(fake, asked["id"]), WAIT, "a greeting")
    assert "Ask me something" in text_of(bot_messages(fake, asked["id"])[0])
    assert llm.requests == [] and await ChatMessage.all().count() == 0


async def test_an_image_without_text_is_answered_with_why_not_a_run(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    """A file that cannot be read (these bytes are no PNG), and no words: nothing to run."""
    async with running_bot(fake, pool):
        asked = await fake.send_user_message(mention(fake, ""), files={"chart.png": b"\x89PNG"})
        await fake.wait_until(lambda: bot_messages(fake, asked["id"]), WAIT, "the notice")
    (notice,) = bot_messages(fake, asked["id"])
    assert "chart.png: it is named as an image but its contents are not one" in text_of(notice)
    assert NO_WORDS in text_of(notice)
    assert llm.requests == [] and await ChatMessage.all().count() == 0
