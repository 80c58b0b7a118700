"""The thread as context on Discord, end to end: people talk in a thread or a forum post (or
reply to each other in a channel), then mention the bot; the real discord.py client reads the
thread with `channel.history(before=...)` and a reply chain through `message.reference`
(resolved, or fetched) from the fake Discord, and the scripted LLM receives those messages,
named, with the first turn only. A later mention that replies to a message brings that
message alone."""

from __future__ import annotations

from core.store.models import ChatMessage, Role
from core.runtime.pool import RunPool
from core.chat.thread_context import TEXT_CHARS
from tests.bots.discord.harness import answered, bot_messages, button, mention, running_bot
from tests.fakes import discord_payloads as dp
from tests.fakes.discordfake import FakeDiscord
from tests.bots.context_reading import context_part, lines_in_order, user_turns
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.fakes.changes import WAIT

GET_MESSAGE = "GET /channels/{channel_id}/messages/{message_id}"


def a_thread(fake: FakeDiscord) -> int:
    thread = int(fake.world.ids.next())
    owner = fake.user["id"]
    fake.world.add_channel(dp.make_thread(thread, fake.guild_id, fake.channel_id, owner, "ideas"))
    return thread


async def test_thread_context_reaches_the_first_turn_only(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    bob = fake.add_user("bob")
    ci = fake.world.add_user("ci", bot=True)
    thread = a_thread(fake)
    llm.script(text_reply("Ship it."), text_reply("Then wait."), text_reply("Noted."))
    async with running_bot(fake, pool):
        chatter = await fake.send_user_message("should we ship on friday?", channel_id=thread)
        await fake.send_user_message("never on a friday", channel_id=thread, author=bob)
        await fake.send_user_message("an old answer", channel_id=thread, author=fake.bot)
        await fake.send_user_message("build 41 green", channel_id=thread, author=ci)
        await fake.send_user_message(mention(fake, "what do you think?"), channel_id=thread)
        await fake.wait_until(lambda: answered(fake, thread, "Ship it."), WAIT, "answer 1")
        await fake.send_user_message("and now?", channel_id=thread)
        await fake.wait_until(lambda: answered(fake, thread, "Then wait."), WAIT, "answer 2")
        # a later mention replying to a message already given as context brings nothing new
        await fake.send_user_message(mention(fake, "see above"), channel_id=thread,
                                     reply_to=chatter["id"])
        await fake.wait_until(lambda: answered(fake, thread, "Noted."), WAIT, "answer 3")

    first = user_turns(llm.requests[0])
    assert len(first) == 1 and first[0][1:] == [{"type": "text", "text": "what do you think?"}]
    context = context_part(first[0])
    lines_in_order(context, "Alice: should we ship on friday?", "Bob: never on a friday",
                   "Ci (bot): build 41 green")
    assert "an old answer" not in context
    second = user_turns(llm.requests[1])
    assert second[-1] == "and now?" and context_part(second[0]) == context
    assert user_turns(llm.requests[2])[-1] == "see above"
    nodes = await ChatMessage.filter(role=Role.USER).order_by("id")
    assert [e["author"] for e in nodes[0].thread_context] == ["Alice", "Bob", "Ci"]
    assert [n.thread_context for n in nodes[1:]] == [None, None]


async def test_a_thread_opened_on_a_message_begins_with_that_message(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    bob = fake.add_user("bob")
    llm.script(text_reply("Noted."))
    async with running_bot(fake, pool):
        opened_on = await fake.send_user_message("the plan: ship on monday")
        thread = int(opened_on["id"])  # a thread opened on a message has the message's id
        fake.world.add_channel(dp.make_thread(thread, fake.guild_id, fake.channel_id,
                                              fake.user["id"], "the plan"))
        await fake.send_user_message("fine by me", channel_id=thread, author=bob)
        await fake.send_user_message(mention(fake, "agreed?"), channel_id=thread)
        await fake.wait_until(lambda: answered(fake, thread, "Noted."), WAIT, "answer")
    lines_in_order(context_part(user_turns(llm.requests[0])[0]),
                   "Alice: the plan: ship on monday", "Bob: fine by me")


async def test_a_forum_post_begins_with_its_starter_message(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    forum = fake.add_forum_channel("help")
    bob = fake.add_user("bob")
    llm.script(text_reply("Unplug it."))
    async with running_bot(fake, pool):
        post = await fake.create_post(forum, "Printer", "my printer is on fire")
        await fake.send_user_message("did you try water?", channel_id=post["id"], author=bob)
        await fake.send_user_message(mention(fake, "help!"), channel_id=post["id"])
        await fake.wait_until(lambda: answered(fake, post["id"], "Unplug it."), WAIT, "answer")
    lines_in_order(context_part(user_turns(llm.requests[0])[0]),
                   "Alice: my printer is on fire", "Bob: did you try water?")


async def test_a_mention_replying_in_a_channel_brings_the_reply_chain_within_the_cap(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    bob = fake.add_user("bob")
    llm.script(text_reply("Two ideas."))
    async with running_bot(fake, pool, thread_context_messages=2):
        first = await fake.send_user_message("idea one")
        second = await fake.send_user_message("idea two", author=bob, reply_to=first["id"])
        third = await fake.send_user_message("idea three", reply_to=second["id"])
        asked = await fake.send_user_message(mention(fake, "which is best?"), reply_to=third["id"])
        await fake.wait_until(lambda: answered(fake, int(asked["id"]), "Two ideas."), WAIT, "answer")
    context = context_part(user_turns(llm.requests[0])[0])
    lines_in_order(context, "Bob: idea two", "Alice: idea three")
    assert "idea one" not in context
    # the mention carried idea three resolved; idea two, which idea three replies to, is fetched
    assert [c.path for c in fake.calls_to(GET_MESSAGE)] == [
        f"/channels/{fake.channel_id}/messages/{second['id']}"]


async def test_a_later_mention_replying_to_an_unseen_message_brings_that_one(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    thread = a_thread(fake)
    llm.script(text_reply("Hello."), text_reply("About the old one."))
    async with running_bot(fake, pool, thread_context_messages=1):
        old = await fake.send_user_message("the old plan", channel_id=thread)
        await fake.send_user_message("the newer plan", channel_id=thread)
        await fake.send_user_message(mention(fake, "hi"), channel_id=thread)
        await fake.wait_until(lambda: answered(fake, thread, "Hello."), WAIT, "answer 1")
        await fake.send_user_message(mention(fake, "what about this?"), channel_id=thread,
                                     reply_to=old["id"])
        await fake.wait_until(lambda: answered(fake, thread, "About the old one."), WAIT, "answer 2")
    assert "the newer plan" in context_part(user_turns(llm.requests[0])[0])
    later = context_part(user_turns(llm.requests[1])[-1])
    assert "the old plan" in later and "the newer plan" not in later


async def test_a_bad_message_is_cleaned_and_bounded_and_the_rest_goes(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    thread = a_thread(fake)
    llm.script(text_reply("Read it."))
    async with running_bot(fake, pool):
        await fake.send_user_message("bad\x00byte", channel_id=thread)
        await fake.send_user_message("x" * 1_000_000, channel_id=thread)
        await fake.send_user_message("the last word", channel_id=thread)
        await fake.send_user_message(mention(fake, "well?"), channel_id=thread)
        await fake.wait_until(lambda: answered(fake, thread, "Read it."), WAIT, "answer")
    context = context_part(user_turns(llm.requests[0])[0])
    assert "bad\ufffdbyte" in context and "\x00" not in context
    assert "x" * (TEXT_CHARS - 1) + "…" in context and "x" * TEXT_CHARS not in context
    assert "the last word" in context


async def test_regenerating_or_editing_the_first_turn_gives_the_agent_its_context(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    thread = a_thread(fake)
    llm.script(text_reply("First try."), text_reply("Second try."), text_reply("Edited."))
    async with running_bot(fake, pool):
        await fake.send_user_message("people were here", channel_id=thread)
        asked = await fake.send_user_message(mention(fake, "so?"), channel_id=thread)
        await fake.wait_until(lambda: answered(fake, thread, "First try."), WAIT, "answer 1")
        (answer,) = bot_messages(fake, thread)
        await fake.click(answer["id"], button(answer, "Regenerate")["custom_id"])
        await fake.wait_until(lambda: answered(fake, thread, "Second try."), WAIT, "answer 2")
        await fake.edit_user_message(asked["id"], mention(fake, "so what?"))
        await fake.wait_until(lambda: answered(fake, thread, "Edited."), WAIT, "the edit's answer")
    first, again, edited = (context_part(user_turns(r)[0]) for r in llm.requests[:3])
    assert "people were here" in first and again == first and edited == first
    assert user_turns(llm.requests[2])[0][1:] == [{"type": "text", "text": "so what?"}]
    assert len(fake.calls_to("GET /channels/{channel_id}/messages")) == 1  # stored, not read again
