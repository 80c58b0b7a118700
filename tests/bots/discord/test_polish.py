"""Discord polish, on the fake Bridge: the reaction on the person's message while it is worked
on (👀, then ✅ or ❌; a stop only takes the 👀 off), also across a restart of the bot; the
thread the bot created named after its conversation's title; forum posts as conversations,
and `/hermes new` in a forum making a post."""

from __future__ import annotations

import logging

import pytest

from core.chat import sessions
from core.runtime.pool import RunPool
from core.store.models import ConversationBinding
from tests.bots.discord.harness import (
    POST,
    answered,
    bot_messages,
    button,
    mention,
    reply_of,
    running_bot,
    showing,
)
from tests.fakes import discord_payloads as dp
from tests.fakes.discordfake import FakeDiscord
from tests.fakes.fake_bridge import FakeBridge, Stall, ev
from tests.fakes.changes import WAIT

REACT = "PUT /channels/{channel_id}/messages/{message_id}/reactions/{emoji}/@me"
UNREACT = "DELETE /channels/{channel_id}/messages/{message_id}/reactions/{emoji}/@me"
RENAME = "PATCH /channels/{channel_id}"


def slow_first_run(fake_bridge: FakeBridge) -> None:
    """Every run says something; the first then waits for `release("hold")`."""
    fake_bridge.default_script = lambda run_id: [
        ev("text", text="thinking it over"), Stall("hold"), ev("done", final_text=f"done {run_id}")]


async def test_the_question_shows_eyes_while_it_runs_then_a_check(
    fake: FakeDiscord, fake_runs: RunPool, fake_bridge: FakeBridge
) -> None:
    slow_first_run(fake_bridge)
    async with running_bot(fake, fake_runs):
        asked = await fake.send_user_message(mention(fake, "what is up?"))
        thread = asked["id"]
        await fake.wait_until(lambda: fake.reactions_on(thread) == ["👀"], WAIT, "👀")
        first_post = fake.calls_to(POST)[0]
        fake_bridge.release("hold")
        await fake.wait_until(lambda: fake.reactions_on(thread) == ["✅"], WAIT, "✅")
        assert answered(fake, thread, "done")
        follow_up = await fake.send_user_message("and then?", channel_id=thread)
        await fake.wait_until(lambda: fake.reactions_on(follow_up["id"]) == ["✅"], WAIT, "✅ 2")

    reacts = fake.calls_to(REACT)
    marks = [(c.params["message_id"], c.params["emoji"]) for c in reacts]
    # the second run may end before its first render: then it gets ✅ only
    assert marks[:2] == [(thread, "👀"), (thread, "✅")] and marks[-1] == (follow_up["id"], "✅")
    # the message a thread was opened on is in the channel; a message in the thread, in it
    assert reacts[0].params["channel_id"] == str(fake.channel_id)
    assert {c.params["channel_id"] for c in reacts if c.params["message_id"] == follow_up["id"]} == {
        thread}
    assert reacts[0].seq > first_post.seq, "the answer's write goes first"
    unreacts = fake.calls_to(UNREACT)
    assert [(c.params["message_id"], c.params["emoji"]) for c in unreacts][0] == (thread, "👀")
    assert all(c.status == 204 for c in reacts + unreacts)


async def test_a_reaction_that_hangs_never_delays_the_answer(
    fake: FakeDiscord, fake_runs: RunPool
) -> None:
    hang = fake.hang_next(REACT, times=10)
    async with running_bot(fake, fake_runs):
        first = await fake.send_user_message(mention(fake, "first"))
        await fake.wait_until(lambda: hang.arrived >= 1, WAIT, "a reaction held")
        second = await fake.send_user_message(mention(fake, "second"))
        await fake.wait_until(lambda: answered(fake, first["id"], "done")
                              and answered(fake, second["id"], "done"), WAIT, "both answers")
        assert fake.reactions_on(first["id"]) == [], "still held"
        hang.release()
        await fake.wait_until(lambda: fake.reactions_on(first["id"]) == ["✅"]
                              and fake.reactions_on(second["id"]) == ["✅"], WAIT, "the marks")


async def test_a_failed_run_gets_a_cross_and_a_stopped_one_loses_its_eyes(
    fake: FakeDiscord, fake_runs: RunPool, fake_bridge: FakeBridge
) -> None:
    fake_bridge.default_script = lambda run_id: [ev("text", text="working"), Stall("never")]
    async with running_bot(fake, fake_runs):
        asked = await fake.send_user_message(mention(fake, "a long job"))
        await fake.wait_until(lambda: fake.reactions_on(asked["id"]) == ["👀"], WAIT, "👀")
        await fake.wait_until(lambda: showing(fake, asked["id"], "working"), WAIT, "the live message")
        live = showing(fake, asked["id"], "working")
        assert live is not None
        await fake.click(live["id"], button(live, "Stop")["custom_id"])
        await fake.wait_until(lambda: showing(fake, asked["id"], "⏹ Stopped"), WAIT, "stopped")
        await fake.wait_until(lambda: fake.reactions_on(asked["id"]) == [], WAIT, "no 👀")

        await fake_bridge.stop()
        failing = await fake.send_user_message(mention(fake, "anyone there?"))
        await fake.wait_until(lambda: fake.reactions_on(failing["id"]) == ["❌"], WAIT, "❌")
    assert showing(fake, failing["id"], "⚠️ Failed")
    assert "⏹" not in [c.params["emoji"] for c in fake.calls_to(REACT)]


async def test_a_run_that_ends_after_a_restart_of_the_bot_still_gets_its_check(
    fake: FakeDiscord, fake_runs: RunPool, fake_bridge: FakeBridge
) -> None:
    """A new DiscordBot (nothing in memory) shows the end of a run the old one started: the
    user's message (in the channel, not the thread) loses its 👀 and gets ✅."""
    slow_first_run(fake_bridge)
    async with running_bot(fake, fake_runs):
        asked = await fake.send_user_message(mention(fake, "survive a restart"))
        await fake.wait_until(lambda: fake.reactions_on(asked["id"]) == ["👀"], WAIT, "👀")
    async with running_bot(fake, fake_runs):
        fake_bridge.release("hold")
        await fake.wait_until(lambda: fake.reactions_on(asked["id"]) == ["✅"], WAIT, "✅")
    assert answered(fake, asked["id"], "done")
    assert {c.params["channel_id"] for c in fake.calls_to(REACT)} == {str(fake.channel_id)}


async def test_a_refused_reaction_is_said_once_and_the_answers_still_come(
    fake: FakeDiscord, fake_runs: RunPool, caplog: pytest.LogCaptureFixture
) -> None:
    """No Add Reactions permission (403), and a message its author deleted (404): skipped."""
    missing = {"code": 50013, "message": "Missing Permissions"}
    fake.fail_next(REACT, times=2, status=403, body=missing)
    caplog.set_level(logging.INFO, logger="bots.discord")
    dm = fake.dm_channel_id()
    async with running_bot(fake, fake_runs):
        await fake.send_user_message("first", channel_id=dm)
        await fake.wait_until(lambda: len(fake.calls_to(REACT)) >= 2, WAIT, "two refused")
        await fake.wait_until(lambda: len(bot_messages(fake, dm)) == 1
                              and answered(fake, dm, "done"), WAIT, "answer 1")
        second = await fake.send_user_message("second", channel_id=dm)
        fake.world.remove_message(fake.message(second["id"]))  # deleted before the bot reacts
        await fake.wait_until(lambda: len(bot_messages(fake, dm)) == 2, WAIT, "answer 2")
        await fake.wait_until(lambda: any(c.status == 404 for c in fake.calls_to(REACT)
                                          + fake.calls_to(UNREACT)), WAIT, "the unknown message")
    refused = [r.getMessage() for r in caplog.records if "reaction refused" in r.getMessage()]
    assert len(refused) == 2, refused  # once for the 403, once for the 404
    assert "Missing Permissions" in refused[0] and "Unknown Message" in refused[1]


async def test_the_thread_of_hermes_new_is_named_after_the_conversations_title(
    fake: FakeDiscord, fake_runs: RunPool
) -> None:
    async with running_bot(fake, fake_runs):
        reply = await reply_of(fake, await fake.run_command("hermes", "new", channel_id=fake.channel_id))
        (thread,) = fake.threads_of(fake.channel_id)
        assert thread["name"] == "Conversation with Hermes" and thread["id"] in str(reply)
        await fake.send_user_message("Which mountain is the tallest on Earth?", channel_id=thread["id"])
        await fake.wait_until(lambda: fake.channel(thread["id"])["name"] != "Conversation with Hermes",
                              WAIT, "the rename")
        assert fake.channel(thread["id"])["name"] == "Which mountain is the tallest…"  # whole words
        await fake.send_user_message("And the second?", channel_id=thread["id"])
        await fake.wait_until(lambda: len(bot_messages(fake, thread["id"])) == 2
                              and answered(fake, thread["id"], "done"), WAIT, "answer 2")
        assert len(fake.calls_to(RENAME)) == 1, "an unchanged title costs nothing"

        (binding,) = await ConversationBinding.filter(thread=thread["id"])
        await sessions.rename_session(binding.session_id, "  Mountains \n of the   world  " + "!" * 120)
        await fake.send_user_message("And the third?", channel_id=thread["id"])
        await fake.wait_until(lambda: fake.channel(thread["id"])["name"].startswith("Mountains"),
                              WAIT, "the second rename")
    name = fake.channel(thread["id"])["name"]
    assert name == "Mountains of the world…"  # a "word" of 120 "!" does not fit in Discord's 100
    assert [c.json for c in fake.calls_to(RENAME)][0] == {"name": "Which mountain is the tallest…"}


async def test_threads_a_person_named_or_named_after_the_question_keep_their_name(
    fake: FakeDiscord, fake_runs: RunPool
) -> None:
    theirs = fake.world.ids.next()
    fake.world.add_channel(dp.make_thread(theirs, fake.guild_id, fake.channel_id, fake.user["id"],
                                          "our plans"))
    async with running_bot(fake, fake_runs):
        await fake.send_user_message(mention(fake, "what do you make of our plans?"), channel_id=theirs)
        await fake.wait_until(lambda: answered(fake, theirs, "done"), WAIT, "answer in their thread")
        asked = await fake.send_user_message(mention(fake, "a question longer than thirty characters"))
        await fake.wait_until(lambda: answered(fake, asked["id"], "done"), WAIT, "answer in ours")
        await fake.send_user_message("more", channel_id=asked["id"])
        await fake.wait_until(lambda: len(bot_messages(fake, asked["id"])) == 2, WAIT, "answer 2")
    assert fake.channel(theirs)["name"] == "our plans"
    assert fake.channel(asked["id"])["name"] == "a question longer than thirty characters"
    assert fake.calls_to(RENAME) == []


async def test_a_forum_post_is_a_conversation_and_hermes_new_there_makes_a_post(
    fake: FakeDiscord, fake_runs: RunPool
) -> None:
    forum = fake.add_forum_channel("help")
    async with running_bot(fake, fake_runs):
        post = await fake.create_post(forum, "Printer on fire", mention(fake, "my printer is on fire"))
        await fake.wait_until(lambda: answered(fake, post["id"], "done"), WAIT, "answer in the post")
        await fake.wait_until(lambda: fake.reactions_on(post["id"]) == ["✅"], WAIT, "✅ on the starter")
        await fake.send_user_message("it is still burning", channel_id=post["id"])
        await fake.wait_until(lambda: len(bot_messages(fake, post["id"])) == 2, WAIT, "answer 2")

        reply = await reply_of(fake, await fake.run_command("hermes", "new", channel_id=post["id"]))
        (new_post,) = [t for t in fake.threads_of(forum) if t["id"] != post["id"]]
        assert new_post["id"] in str(reply) and new_post["owner_id"] == str(fake.bot_id)
        starter = fake.message(new_post["id"])
        assert starter["channel_id"] == new_post["id"] and "every message in this post" in starter["content"]
        await fake.send_user_message("How do I print double-sided pages?", channel_id=new_post["id"])
        title = sessions.title_from_message("How do I print double-sided pages?")
        await fake.wait_until(lambda: fake.channel(new_post["id"])["name"] == title, WAIT,
                              "the post named after its title")

    assert fake.channel(post["id"])["name"] == "Printer on fire", "a person's post keeps its name"
    reacts = [c for c in fake.calls_to(REACT) if c.params["message_id"] == post["id"]]
    assert {c.params["channel_id"] for c in reacts} == {post["id"]}, "a starter is in its post"
    bindings = await ConversationBinding.all().order_by("id")
    assert [(b.channel, b.thread) for b in bindings] == [(str(forum), post["id"]), (str(forum), new_post["id"])]
    assert bindings[0].session_id != bindings[1].session_id
    assert fake.rejected == []
