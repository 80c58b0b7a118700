"""The thread as context on Slack, end to end: people talk in a thread, then mention the bot
there; the real slack-bolt app reads the thread with `conversations.replies` from the fake
Slack (authors named with `users.info`), and the scripted LLM receives those messages, named,
with the first turn only. The cap holds, a bad message is cleaned and bounded, a refused read
costs only the context, and Regenerate of the first turn gives the agent the same context."""

from __future__ import annotations

import pytest

from bots.slack import ids
from core.chat.thread_context import TEXT_CHARS
from core.runtime.pool import RunPool
from core.store.models import ChatMessage, Role
from tests.bots.context_reading import context_part, lines_in_order, user_turns
from tests.bots.slack.clocks import FastClock
from tests.bots.slack.harness import Harness, running, until
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.fakes.slack import FakeSlack, Message
from tests.fakes.slack_payloads import CHANNEL_ID


def people_talk(slack: FakeSlack) -> Message:
    """A thread between alice and bob, with a message of the bot's and one of another bot's;
    its parent."""
    slack.workspace.add_user("U0ALICE", "alice")
    slack.workspace.add_user("U0BOB", "Bob Builder")
    parent = slack.add_message(CHANNEL_ID, "the deploy failed again", user="U0ALICE")
    slack.add_message(CHANNEL_ID, "same error as <https://ci.example/1|yesterday>, <@U0ALICE>?",
                      user="U0BOB", thread_ts=parent.ts)
    slack.workspace.post_as_bot(CHANNEL_ID, text="an old answer of ours", thread_ts=parent.ts)
    slack.add_message(CHANNEL_ID, "build #41 red", user=None, bot_id="B0CI",
                      thread_ts=parent.ts)
    return parent


async def mention(h: Harness, text: str, thread_ts: str) -> str:
    """Mention the bot in the thread (a ts after every message so far); the mention's ts."""
    ts = h.slack.workspace.next_ts()
    await h.event("app_mention", text=text, thread_ts=thread_ts, ts=ts)
    return ts


async def test_thread_context_reaches_the_first_turn_only(h: Harness, llm: ScriptedLLM) -> None:
    llm.script(text_reply("Looks like the cache."), text_reply("Clear it."))
    parent = people_talk(h.slack)
    await mention(h, "what do you think?", parent.ts)
    await h.answered(CHANNEL_ID, parent.ts)
    ts = h.slack.workspace.next_ts()
    await h.event("thread_message", text="and then?", thread_ts=parent.ts, ts=ts)
    await h.answered(CHANNEL_ID, parent.ts, count=2)

    first = user_turns(llm.requests[0])
    assert len(first) == 1 and first[0][1:] == [{"type": "text", "text": "what do you think?"}]
    context = context_part(first[0])
    lines_in_order(context, "alice: the deploy failed again",
                   "Bob Builder: same error as yesterday (https://ci.example/1), @alice?",
                   "B0CI (bot): build #41 red")
    assert "an old answer of ours" not in context

    second = user_turns(llm.requests[1])
    assert second[-1] == "and then?"  # the new turn carries no context
    assert context_part(second[0]) == context  # the first turn keeps it, as the agent saw it
    first_node, second_node = await ChatMessage.filter(role=Role.USER).order_by("id")
    assert [e["author"] for e in first_node.thread_context] == ["alice", "Bob Builder", "B0CI"]
    assert second_node.thread_context is None
    assert len(h.slack.calls_to("conversations.replies")) == 1


async def test_the_cap_keeps_the_newest_and_zero_turns_it_off(
    fake_slack: FakeSlack, pool: RunPool, fast_clock: FastClock, llm: ScriptedLLM,
) -> None:
    llm.script(text_reply("Two of them."), text_reply("None of them."))
    parent = fake_slack.add_message(CHANNEL_ID, "message 0", user="U0ALICE")
    for n in range(1, 5):
        fake_slack.add_message(CHANNEL_ID, f"message {n}", user="U0ALICE", thread_ts=parent.ts)
    async with running(fake_slack, pool, fast_clock, thread_context_messages=2) as h:
        await mention(h, "summarise", parent.ts)
        await h.answered(CHANNEL_ID, parent.ts)
    context = context_part(user_turns(llm.requests[0])[0])
    assert "message 3" in context and "message 4" in context
    assert "message 2" not in context and "message 0" not in context

    other = fake_slack.add_message(CHANNEL_ID, "quiet chatter", user="U0ALICE")
    async with running(fake_slack, pool, fast_clock, thread_context_messages=0) as h:
        await mention(h, "anything?", other.ts)
        await h.answered(CHANNEL_ID, other.ts)
    assert user_turns(llm.requests[1])[-1] == "anything?"
    assert len(fake_slack.calls_to("conversations.replies")) == 1  # not read when off


async def test_a_bad_message_is_cleaned_and_bounded_and_the_rest_goes(
    h: Harness, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("Read it."))
    parent = h.slack.add_message(CHANNEL_ID, "bad\x00byte", user="U0ALICE")
    h.slack.add_message(CHANNEL_ID, "x" * 2_000_000, user="U0ALICE", thread_ts=parent.ts)
    h.slack.add_message(CHANNEL_ID, "the last word", user="U0ALICE", thread_ts=parent.ts)
    await mention(h, "well?", parent.ts)
    await h.answered(CHANNEL_ID, parent.ts)
    context = context_part(user_turns(llm.requests[0])[0])
    assert "bad\ufffdbyte" in context and "\x00" not in context
    assert "x" * (TEXT_CHARS - 1) + "…" in context and "x" * TEXT_CHARS not in context
    assert "the last word" in context
    node = await ChatMessage.get(role=Role.USER)
    assert [len(e["text"]) for e in node.thread_context] == [len("bad\ufffdbyte"), TEXT_CHARS, 13]


@pytest.mark.parametrize("failure", ["missing_scope", "ratelimited"])
async def test_a_failed_read_costs_only_the_context(
    h: Harness, llm: ScriptedLLM, failure: str
) -> None:
    llm.script(text_reply("Answered anyway."))
    if failure == "ratelimited":
        h.slack.ratelimit("conversations.replies", retry_after=30)
    else:
        h.slack.refuse("conversations.replies", failure)
    parent = h.slack.add_message(CHANNEL_ID, "people talking", user="U0ALICE")
    await mention(h, "hello?", parent.ts)
    await h.answered(CHANNEL_ID, parent.ts)
    assert user_turns(llm.requests[0]) == ["hello?"]
    assert (await ChatMessage.get(role=Role.USER)).thread_context is None
    assert len(h.slack.calls_to("conversations.replies")) == 1  # tried once: the answer waits for no retry


async def test_regenerating_the_first_turn_gives_the_agent_its_context(
    h: Harness, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("First try."), text_reply("Second try."))
    parent = people_talk(h.slack)
    await mention(h, "what now?", parent.ts)
    [answer] = await h.answered(CHANNEL_ID, parent.ts)
    await h.click(answer, ids.REGENERATE)
    await until(lambda: len(llm.requests) == 2 and h.slack.message(CHANNEL_ID, answer.ts))
    await h.bot.idle()
    assert context_part(user_turns(llm.requests[1])[0]) == context_part(
        user_turns(llm.requests[0])[0])
    assert len(h.slack.calls_to("conversations.replies")) == 1  # stored, not read again
