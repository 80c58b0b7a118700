"""Requirement (issue #8 §5): "an id of another session cannot be activated, edited or
exported through a session it does not belong to".

The admin API takes a session id next to a message id in two places, both covered where they
live: `parentMessageId` of POST /sessions/{id}/runs (tests/admin/test_runs.py
test_bad_starts_are_400_naming_the_field_and_write_nothing, case "OTHER") and `before` of
GET /sessions/{id}/messages (tests/admin/test_messages.py
test_before_must_be_on_the_active_branch_of_that_session); its other routes take one id only.
In the chats, every button carries database ids: here a click in one conversation whose value
names a message, run or session of another is refused privately and changes nothing."""

from __future__ import annotations

from typing import Any

from bots.slack import ids
from core.runtime.pool import RunPool
from core.store.models import ChatMessage, ChatSession, ClarifyPause, MessageStatus, PauseStatus
from tests.bots.discord.harness import answered, mention, running_bot
from tests.bots.slack.harness import Harness, button, until
from tests.fakes.discordfake import FakeDiscord
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply
from tests.fakes.slack_payloads import CHANNEL_ID, make_block_action
from tests.support.slack import QUESTION, asked
from tests.fakes.changes import WAIT

ELSEWHERE = "belongs to another conversation"


async def _snapshot() -> list[Any]:
    messages = await ChatMessage.all().order_by("id").values_list(
        "id", "session_id", "is_active", "status", "content")
    sessions = await ChatSession.all().order_by("id").values_list("id", "model_id", "skill_folder")
    return [messages, sessions]


async def test_slack_clicks_naming_another_conversation_are_refused(
    h: Harness, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("Answer in A."), text_reply("Answer in B."))
    thread_a = (await h.event("app_mention", text="question A"))["ts"]
    [answer_a] = await h.answered(CHANNEL_ID, thread_a)
    thread_b = (await h.event("app_mention", text="question B"))["ts"]
    [answer_b] = await h.answered(CHANNEL_ID, thread_b)
    other = await ChatMessage.get(id=ids.unpack(button(answer_b, ids.REGENERATE)["value"], 1)[0])
    own = ids.unpack(button(answer_a, ids.REGENERATE)["value"], 1)[0]
    before = await _snapshot()

    forged = [
        (ids.REGENERATE, ids.pack(other.id), None),
        (ids.NEXT, ids.pack(own, other.id), None),  # switch A's slot to B's answer
        (ids.PREVIOUS, ids.pack(other.id, other.id), None),
        (ids.SHOW_THINKING, ids.pack(other.id), None),
        (ids.STOP, other.run_id, None),
        (ids.SET_MODEL, None, {"text": {"type": "plain_text", "text": "Scripted"},
                               "value": f"{other.session_id}:scripted"}),
    ]
    for count, (action, value, option) in enumerate(forged, start=1):
        kind = "static_select" if option else "button"
        await h.interact(make_block_action(
            action, value, action_type=kind, selected_option=option, channel=CHANNEL_ID,
            message_ts=answer_a.ts, thread_ts=thread_a, trigger_id=h.slack.new_trigger_id()))
        await until(lambda: len([e for e in h.ephemerals() if ELSEWHERE in e]) == count)
    await h.bot.idle()
    assert await _snapshot() == before
    assert len(llm.requests) == 2 and h.slack.calls_to("views.open") == []
    assert h.slack.message(CHANNEL_ID, answer_a.ts).blocks == answer_a.blocks


async def test_slack_cannot_answer_or_stop_another_conversations_waiting_run(
    h: Harness, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("Answer in A."), tool_reply(ToolCall("clarify", QUESTION)),
               text_reply("Blue it is."))
    thread_a = (await h.event("app_mention", text="question A"))["ts"]
    [answer_a] = await h.answered(CHANNEL_ID, thread_a)
    thread_b = (await h.event("app_mention", text="paint the shed"))["ts"]
    question = await asked(h, thread_b)
    pause = await ClarifyPause.get()
    waiting = await ChatMessage.get(run_id=pause.run_id)
    before = await _snapshot()
    forged = [(ids.choice_action(0), ids.pack(pause.id, 0)), (ids.CLARIFY_CUSTOM, ids.pack(pause.id)),
              (ids.STOP, pause.run_id)]
    for count, (action, value) in enumerate(forged, start=1):
        await h.interact(make_block_action(
            action, value, channel=CHANNEL_ID, message_ts=answer_a.ts, thread_ts=thread_a,
            trigger_id=h.slack.new_trigger_id()))
        await until(lambda: len([e for e in h.ephemerals() if ELSEWHERE in e]) == count)
    # (not bot.idle(): the run waiting on its question keeps its follower busy)
    assert await _snapshot() == before and h.slack.calls_to("views.open") == []
    assert (await ClarifyPause.get()).status == PauseStatus.UNANSWERED
    assert (await ChatMessage.get(id=waiting.id)).status == MessageStatus.RUNNING
    await h.click(question, ids.choice_action(1))  # from its own thread it still works
    await h.answered(CHANNEL_ID, thread_b)
    assert (await ClarifyPause.get()).answer == "blue"


async def test_discord_clicks_naming_another_conversation_are_refused(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("Answer in A."), text_reply("Answer in B."))
    async with running_bot(fake, pool):
        thread_a = int((await fake.send_user_message(mention(fake, "question A")))["id"])
        await fake.wait_until(lambda: answered(fake, thread_a, "Answer in A."), WAIT, "answer A")
        thread_b = int((await fake.send_user_message(mention(fake, "question B")))["id"])
        await fake.wait_until(lambda: answered(fake, thread_b, "Answer in B."), WAIT, "answer B")
        answer_a = answered(fake, thread_a, "Answer in A.")
        assert answer_a is not None
        other = await ChatMessage.filter(content="Answer in B.").get()
        before = await _snapshot()
        forged = [
            (f"hermes:regen:{other.id}", 2, None),
            (f"hermes:ver:{other.id}", 2, None),
            (f"hermes:think:{other.id}", 2, None),
            (f"hermes:page:{other.id}:1", 2, None),
            (f"hermes:summary:{other.id}", 2, None),
            (f"hermes:stop:{other.run_id}", 2, None),
            (f"hermes:model:{other.session_id}", 3, ["scripted"]),
        ]
        for custom_id, component_type, values in forged:
            click = await fake.click(answer_a["id"], custom_id, component_type=component_type,
                                     values=values)
            await fake.wait_until(lambda c=click: _private(fake, c.id), WAIT, custom_id)
            assert ELSEWHERE in _private(fake, click.id), custom_id
    assert await _snapshot() == before
    assert len(llm.requests) == 2


def _private(fake: FakeDiscord, interaction_id: str) -> str:
    """The ephemeral answer to an interaction, if there is one yet."""
    response = fake.interaction(interaction_id).response or {}
    data = response.get("data") or {}
    return data.get("content", "") if data.get("flags", 0) & 64 else ""
