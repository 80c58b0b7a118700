"""Who may act and who may talk (CONVERSATION_ACTIONS, CHAT_ADMINS, ALLOWED_USERS): a click on
someone else's turn is refused privately and changes nothing; a person not allowed to talk to
the bot is told so privately, once per conversation, and nothing runs."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from bots.slack import ids
from core.conversation.refusals import INTERNAL, NOT_ALLOWED, not_yours
from core.runtime.pool import RunPool
from core.store.models import ChatMessage, ChatSession, ClarifyPause, MessageStatus, PauseStatus, Role
from tests.bots.slack.clocks import FastClock
from tests.bots.slack.harness import Harness, button, has_button, running, texts, until
from tests.fakes.fake_bridge import FakeBridge, Stall, ev
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply
from tests.fakes.slack import FakeSlack, Message
from tests.fakes.slack_payloads import CHANNEL_ID, USER_ID, make_block_action, make_slack_event

ASKER, OTHER, ADMIN = USER_ID, "U0OTHER", "U0ADMIN"
REFUSED = not_yours(ASKER, mention=f"<@{ASKER}>")
QUESTION = {"question": "Which colour?", "choices": ["red", "blue"]}


@pytest.fixture
async def ah(fake_slack: FakeSlack, pool: RunPool, fast_clock: FastClock) -> AsyncIterator[Harness]:
    """The bot on the real Bridge with CONVERSATION_ACTIONS=asker and one chat admin."""
    async with running(fake_slack, pool, fast_clock, conversation_actions="asker",
                       chat_admins=(ADMIN,)) as harness:
        yield harness


@pytest.fixture
async def anyone(fake_slack: FakeSlack, pool: RunPool, fast_clock: FastClock) -> AsyncIterator[Harness]:
    async with running(fake_slack, pool, fast_clock, conversation_actions="anyone") as harness:
        yield harness


@pytest.fixture
async def listed(fake_slack: FakeSlack, fake_pool: RunPool, fast_clock: FastClock) -> AsyncIterator[Harness]:
    """Only ASKER (and the admin) may talk to the bot."""
    async with running(fake_slack, fake_pool, fast_clock, allowed_users=(ASKER,),
                       chat_admins=(ADMIN,)) as harness:
        yield harness


async def refused(h: Harness, user: str, count: int = 1) -> list[str]:
    """Until `user` has been told `count` times that the turn is not theirs."""
    return await until(lambda: (told := [t for t in h.ephemerals(user) if t == REFUSED])
                       and len(told) >= count and told)


async def assistant_count() -> int:
    return await ChatMessage.filter(role=Role.ASSISTANT).count()


async def test_asker_refuses_another_users_regenerate_privately(ah: Harness, llm: ScriptedLLM) -> None:
    llm.script(text_reply("One."), text_reply("Two."), text_reply("Three."))
    thread = (await ah.event("app_mention", text="count"))["ts"]
    [answer] = await ah.answered(CHANNEL_ID, thread)

    await ah.click(answer, ids.REGENERATE, user=OTHER)
    await refused(ah, OTHER)
    told = [e for e in ah.slack.workspace.ephemerals if e.get("user") == OTHER]
    assert told[0]["thread_ts"] == thread and told[0]["channel"] == CHANNEL_ID  # in the thread
    await ah.bot.idle()
    assert await assistant_count() == 1 and "One." in texts(ah.slack.message(CHANNEL_ID, answer.ts))

    await ah.click(answer, ids.REGENERATE, user=ADMIN)  # a chat admin may
    shown = await until(lambda: has_button(m := ah.slack.message(CHANNEL_ID, answer.ts), ids.PREVIOUS)
                        and "Two." in texts(m) and m)
    await ah.click(shown, ids.PREVIOUS, user=OTHER)  # ◀ is the asker's too
    await refused(ah, OTHER, count=2)
    await ah.click(shown, ids.REGENERATE)  # and so may the asker
    await until(lambda: has_button(m := ah.slack.message(CHANNEL_ID, answer.ts), ids.POSITION)
                and button(m, ids.POSITION)["text"]["text"] == "3/3" and "Three." in texts(m))
    assert await assistant_count() == 3


async def test_asker_refuses_another_users_stop(fake_slack: FakeSlack, fake_pool: RunPool,
                                               fast_clock: FastClock, fake_bridge: FakeBridge) -> None:
    fake_bridge.default_script = lambda run_id: [Stall("go"), ev("done", final_text="done")]
    async with running(fake_slack, fake_pool, fast_clock, chat_admins=(ADMIN,)) as h:
        thread = (await h.event("app_mention", text="take your time"))["ts"]
        await until(lambda: h.bot_messages(CHANNEL_ID, thread))
        await h.event("thread_message", text="me too", user=OTHER, thread_ts=thread)
        busy = await until(lambda: [m for m in h.bot_messages(CHANNEL_ID, thread)
                                    if has_button(m, ids.STOP) and "still working" in m.text])
        await h.click(busy[0], ids.STOP, user=OTHER)  # writing is open; stopping is not
        await refused(h, OTHER)
        assert not any(run.aborted for run in fake_bridge.runs.values())
        await h.click(busy[0], ids.STOP, user=ADMIN)
        [stopped] = await h.answered(CHANNEL_ID, thread)
        assert "⏹ Stopped" in texts(stopped)


async def asked(h: Harness, thread: str) -> Message:
    found = await until(lambda: [m for m in h.bot_messages(CHANNEL_ID, thread)
                                 if has_button(m, ids.CLARIFY_CUSTOM)])
    return found[0]


async def test_asker_refuses_another_users_clarify_answer(ah: Harness, llm: ScriptedLLM) -> None:
    llm.script(tool_reply(ToolCall("clarify", QUESTION)), text_reply("Red it is."))
    thread = (await ah.event("app_mention", text="paint the shed"))["ts"]
    question = await asked(ah, thread)

    await ah.click(question, ids.choice_action(1), user=OTHER)
    await refused(ah, OTHER)
    await ah.click(question, ids.CLARIFY_CUSTOM, user=OTHER, trigger=True)
    await refused(ah, OTHER, count=2)
    assert not ah.slack.state.views  # no modal opened for them
    pause = await ClarifyPause.get()
    response = await ah.submit(ids.CUSTOM_ANSWER_VIEW, {ids.ANSWER_BLOCK: {ids.ANSWER_INPUT: {
        "type": "plain_text_input", "value": "green"}}}, ids.pack(pause.id), user=OTHER)
    assert response.json() == {"response_action": "errors", "errors": {ids.ANSWER_BLOCK: REFUSED}}
    assert (await ClarifyPause.get()).status == PauseStatus.UNANSWERED

    await ah.click(question, ids.choice_action(0), user=ASKER)
    [done] = await ah.answered(CHANNEL_ID, thread)
    assert "Red it is." in texts(done)


async def test_anyone_lets_every_user_act(anyone: Harness, llm: ScriptedLLM) -> None:
    llm.script(text_reply("One."), text_reply("Two."))
    thread = (await anyone.event("app_mention", text="count"))["ts"]
    [answer] = await anyone.answered(CHANNEL_ID, thread)
    await anyone.click(answer, ids.REGENERATE, user=OTHER)
    await until(lambda: "Two." in texts(anyone.slack.message(CHANNEL_ID, answer.ts)))
    assert REFUSED not in anyone.ephemerals(OTHER)


async def nothing_stored() -> bool:
    return not await ChatMessage.exists() and not await ChatSession.exists()


async def test_allowed_users_refuse_once_per_conversation_and_nothing_runs(
        listed: Harness, fake_bridge: FakeBridge) -> None:
    mention = await listed.event("app_mention", text="hello", user=OTHER)
    await until(lambda: NOT_ALLOWED in listed.ephemerals(OTHER))
    await listed.event("thread_message", text="anyone?", user=OTHER, thread_ts=mention["ts"])
    await listed.event("app_mention", text="status", user=OTHER, thread_ts=mention["ts"])
    await listed.bot.idle()
    assert listed.ephemerals(OTHER) == [NOT_ALLOWED]  # once for the conversation
    told = next(e for e in listed.slack.workspace.ephemerals if e.get("user") == OTHER)
    assert told["thread_ts"] == mention["ts"]
    assert await nothing_stored() and not fake_bridge.runs
    assert not listed.bot_messages(CHANNEL_ID, mention["ts"])

    other_thread = await listed.event("app_mention", text="hello again", user=OTHER)
    await until(lambda: len(listed.ephemerals(OTHER)) == 2)  # another conversation: told again
    assert (await listed.command("status", user=OTHER))["text"] == NOT_ALLOWED
    await listed.bot.idle()
    assert await nothing_stored() and not listed.bot_messages(CHANNEL_ID, other_thread["ts"])


async def test_allowed_users_and_admins_talk(listed: Harness, fake_bridge: FakeBridge) -> None:
    fake_bridge.default_script = lambda run_id: [ev("done", final_text="hi")]
    for user in (ASKER, ADMIN):
        thread = (await listed.event("app_mention", text="hello", user=user))["ts"]
        await listed.answered(CHANNEL_ID, thread)
        assert NOT_ALLOWED not in listed.ephemerals(user)



async def test_the_error_boundary_answers_a_listener_that_fails(ah: Harness, llm: ScriptedLLM) -> None:
    """What a listener raises reaches bolt's app.error: the clicker is told privately, Slack
    gets its 200, and nothing changes."""
    llm.script(tool_reply(ToolCall("clarify", QUESTION)), text_reply("Red."))
    thread = (await ah.event("app_mention", text="paint"))["ts"]
    question = await asked(ah, thread)
    pause = await ClarifyPause.get()
    response = await ah.interact(make_block_action(  # a choice this question does not have
        ids.choice_action(7), ids.pack(pause.id, 7), channel=CHANNEL_ID, message_ts=question.ts,
        thread_ts=thread))
    assert response.status_code == 200
    await until(lambda: INTERNAL in ah.ephemerals(ASKER))
    assert (await ClarifyPause.get()).status == PauseStatus.UNANSWERED
    await ah.click(question, ids.choice_action(0))
    await ah.answered(CHANNEL_ID, thread)


async def test_asker_refuses_another_users_native_stop(ah: Harness, llm: ScriptedLLM) -> None:
    """The agent session's native Stop is Stop too: someone else's press stops nothing."""
    gate = asyncio.Event()
    llm.script(text_reply("Finished anyway.", gate=gate))
    thread = (await ah.event("app_mention", text="write a novel"))["ts"]
    await until(lambda: (s := ah.slack.agent_session(CHANNEL_ID, thread)) and s["status"] == "processing")
    event = ah.slack.press_stop(CHANNEL_ID, thread, user=OTHER)
    assert (await ah.post_event(make_slack_event(event))).status_code == 200
    await refused(ah, OTHER)
    gate.set()
    await until(lambda: any("Finished anyway." in texts(m) for m in ah.bot_messages(CHANNEL_ID, thread)))
    assert await ChatMessage.filter(status=MessageStatus.STOPPED).count() == 0


async def test_a_refused_person_is_told_once_across_restarts(
        fake_slack: FakeSlack, fake_pool: RunPool, fast_clock: FastClock) -> None:
    """Who was told is in the database (the event ledger), not only in one process."""
    thread = None
    for _ in range(2):  # the second bot is a restart (or another replica)
        async with running(fake_slack, fake_pool, fast_clock, allowed_users=(ASKER,)) as h:
            event = await h.event("app_mention", text="hello", user=OTHER, thread_ts=thread)
            thread = thread or event["ts"]
            await h.bot.idle()
            await until(lambda: NOT_ALLOWED in h.ephemerals(OTHER))
    assert h.ephemerals(OTHER) == [NOT_ALLOWED]
    assert await nothing_stored()
