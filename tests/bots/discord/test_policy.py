"""Who may act and who may talk (CONVERSATION_ACTIONS, CHAT_ADMINS, ALLOWED_USERS,
DISCORD_ALLOWED_ROLES), through the fake Discord gateway with real discord.py."""

from __future__ import annotations

from typing import Any

from core.conversation.refusals import NOT_ALLOWED, not_yours
from core.runtime.pool import RunPool
from core.store.models import ChatMessage, ChatSession, ClarifyPause, PauseStatus, Role
from tests.bots.discord.harness import (
    answered,
    bot_messages,
    button,
    buttons,
    mention,
    reply_of,
    running_bot,
    text_of,
)
from tests.fakes import discord_payloads as dp
from tests.fakes.discordfake import FakeDiscord, InteractionRecord
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply
from tests.support.discord import COLOUR, ask
from tests.fakes.changes import WAIT

INTERACTION_RESPONSE = 20  # the message type of a slash command's answer
Payload = dict[str, Any]


async def refusal_of(fake: FakeDiscord, click: InteractionRecord) -> Payload:
    """The ephemeral the bot answered a click with."""
    told = await reply_of(fake, click, WAIT)
    assert told["flags"] & 64, "said privately"
    return told


async def answers() -> list[str]:
    return [m.content for m in await ChatMessage.filter(role=Role.ASSISTANT).order_by("id")]


async def test_asker_refuses_another_users_click_privately_and_lets_the_asker_and_an_admin_through(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    bob, carol = fake.add_user("bob"), fake.add_user("carol")
    alice = fake.user["id"]
    llm.script(text_reply("Joke one."), text_reply("Joke two."), text_reply("Joke three."))
    async with running_bot(fake, pool, chat_admins=(carol["id"],)):
        asked = await fake.send_user_message(mention(fake, "tell me a joke"))
        thread = int(asked["id"])
        await fake.wait_until(lambda: answered(fake, thread, "Joke one."), WAIT, "answer 1")
        (answer,) = bot_messages(fake, thread)
        regenerate = button(answer, "Regenerate")["custom_id"]
        refused = await fake.click(answer["id"], regenerate, user=bob)
        told = await refusal_of(fake, refused)
        assert await answers() == ["Joke one."], "bob's click changed nothing"
        await fake.click(answer["id"], regenerate, user=carol)  # a chat admin may
        await fake.wait_until(lambda: answered(fake, thread, "Joke two."), WAIT, "answer 2")
        await fake.click(answer["id"], regenerate)  # so may alice, who asked
        await fake.wait_until(lambda: answered(fake, thread, "Joke three."), WAIT, "answer 3")
    assert text_of(told) == not_yours(alice, mention=f"<@{alice}>")
    assert f"<@{alice}>" in text_of(told)
    assert await answers() == ["Joke one.", "Joke two.", "Joke three."]
    assert len(llm.requests) == 3


async def test_asker_keeps_a_clarify_question_and_stop_for_the_asker(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    bob = fake.add_user("bob")
    llm.script(tool_reply(ToolCall("clarify", COLOUR)), text_reply("Blue it is."))
    async with running_bot(fake, pool):
        thread, question = await ask(fake)
        by_button = await fake.click(question["id"], button(question, "blue")["custom_id"], user=bob)
        custom = await fake.click(question["id"], button(question, "Custom answer…")["custom_id"],
                                  user=bob)
        (live,) = [m for m in bot_messages(fake, thread) if m["id"] != question["id"]]
        stop = await fake.click(live["id"], button(live, "Stop")["custom_id"], user=bob)
        told = [text_of(await refusal_of(fake, click)) for click in (by_button, custom, stop)]
        # A modal alice opened, submitted by bob, is refused as well.
        opened = await fake.click(question["id"], button(question, "Custom answer…")["custom_id"])
        await fake.wait_for_response(opened)
        submitted = await fake.submit_modal(opened, {"answer": "green"}, user=bob)
        told.append(text_of(await refusal_of(fake, submitted)))
        assert (await ClarifyPause.get()).status == PauseStatus.UNANSWERED
        assert buttons(fake.message(question["id"])), "the question is still open"
        assert custom.modal is None, "no modal for bob"
        await fake.click(question["id"], button(question, "blue")["custom_id"])  # alice answers
        await fake.wait_until(lambda: answered(fake, thread, "Blue it is."), WAIT, "the answer")
    assert told == [not_yours(fake.user["id"], mention=f"<@{fake.user['id']}>")] * 4
    pause = await ClarifyPause.get()
    assert (pause.answer, pause.answered_by) == ("blue", fake.user["id"])


async def test_anyone_lets_every_user_act(fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM) -> None:
    bob = fake.add_user("bob")
    llm.script(text_reply("Joke one."), text_reply("Joke two."))
    async with running_bot(fake, pool, conversation_actions="anyone"):
        asked = await fake.send_user_message(mention(fake, "tell me a joke"))
        thread = int(asked["id"])
        await fake.wait_until(lambda: answered(fake, thread, "Joke one."), WAIT, "answer 1")
        (answer,) = bot_messages(fake, thread)
        await fake.click(answer["id"], button(answer, "Regenerate")["custom_id"], user=bob)
        await fake.wait_until(lambda: answered(fake, thread, "Joke two."), WAIT, "answer 2")
    assert await answers() == ["Joke one.", "Joke two."]


async def test_allowed_users_refuses_others_once_per_conversation_and_nothing_runs(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    bob = fake.add_user("bob")
    async with running_bot(fake, pool, allowed_users=(fake.user["id"],)):
        await fake.send_user_message(mention(fake, "hello?"), author=bob)
        await fake.send_user_message(mention(fake, "anyone there?"), author=bob)
        dm = fake.dm_channel_id(bob)
        await fake.wait_until(lambda: bot_messages(fake, dm), WAIT, "bob told in a DM")
        command = await fake.run_command("hermes", "status", user=bob)
        told = await refusal_of(fake, command)
        # bob's second message was dropped while the first was told: once per conversation
        await fake.send_user_message(mention(fake, "please?"), author=bob)
        await fake.send_user_message("in private, then", channel_id=dm, author=bob)
        await fake.wait_until(lambda: len(bot_messages(fake, dm)) == 2, WAIT, "told once in the DM too")
    assert [NOT_ALLOWED in text_of(m) for m in bot_messages(fake, dm)] == [True, True]
    assert text_of(told) == NOT_ALLOWED
    assert fake.threads_of(fake.channel_id) == [], "no thread opened"
    said = [m for m in bot_messages(fake, fake.channel_id) if m["type"] != INTERACTION_RESPONSE]
    assert said == [], "nothing said in the channel but the command's ephemeral"
    assert await ChatMessage.all().count() == 0 and await ChatSession.all().count() == 0
    assert llm.requests == []


async def test_discord_allowed_roles_admits_members_with_a_role_and_refuses_the_rest(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    bob, carol = fake.add_user("bob"), fake.add_user("carol")
    role = dp.make_role(fake.world.ids.next(), "hermes-users")
    guild = fake.world.guilds[str(fake.guild_id)]
    guild.roles.append(role)
    guild.members[carol["id"]]["roles"] = [role["id"]]
    llm.script(text_reply("Hi Carol."))
    async with running_bot(fake, pool, discord_allowed_roles=(role["id"],)):
        await fake.send_user_message(mention(fake, "hello?"), author=bob)
        await fake.wait_until(lambda: bot_messages(fake, fake.dm_channel_id(bob)), WAIT, "bob told")
        assert await ChatMessage.all().count() == 0, "nothing of bob's ran"
        asked = await fake.send_user_message(mention(fake, "hello"), author=carol)
        await fake.wait_until(lambda: answered(fake, int(asked["id"]), "Hi Carol."), WAIT, "carol")
    assert [m.author for m in await ChatMessage.filter(role=Role.USER)] == [carol["id"]]
    assert [NOT_ALLOWED in text_of(m) for m in bot_messages(fake, fake.dm_channel_id(bob))] == [True]
    assert len(llm.requests) == 1


async def test_a_refused_person_whose_dms_are_closed_is_told_in_a_reply_that_mentions_them(
    fake: FakeDiscord, pool: RunPool
) -> None:
    bob = fake.add_user("bob")
    async with running_bot(fake, pool, allowed_users=(fake.user["id"],)):
        fake.fail_next("POST /users/@me/channels", status=403,
                       body={"code": 50007, "message": "Cannot send messages to this user"})
        asked = await fake.send_user_message(mention(fake, "hello?"), author=bob)
        await fake.wait_until(lambda: bot_messages(fake, fake.channel_id), WAIT, "the reply")
    (reply,) = bot_messages(fake, fake.channel_id)
    assert text_of(reply) == f"<@{bob['id']}> {NOT_ALLOWED}"
    assert reply["message_reference"]["message_id"] == asked["id"]
    assert await ChatMessage.all().count() == 0
