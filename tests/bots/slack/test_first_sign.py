"""A turn's first sign (bots/slack/delivery/first_sign.py), shown before anything of the turn is
written: the thread's loading status, or, where that cannot show now, for a message that opens
a thread a placeholder message that becomes the turn's own; withdrawn when no run follows."""

from __future__ import annotations

import pytest

from bots.slack import ids
from bots.slack.render.turn import WORKING
from core.edge.run_quota import RunQuota
from core.store.models import ChatMessage, ChatSession, ConversationBinding, Role
from tests.bots.slack.harness import Harness, button, has_button, texts, until
from tests.conftest import BACKEND
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.fakes.slack import Message
from tests.fakes.slack_payloads import CHANNEL_ID
from tests.support.held_writes import held_writes

STATUS = "assistant.threads.setStatus"
POST = "chat.postMessage"


async def nothing_written() -> bool:
    """No session, binding or message of any conversation in the database."""
    return not (await ChatSession.exists() or await ConversationBinding.exists()
                or await ChatMessage.exists())


async def test_the_loading_status_comes_before_anything_of_the_turn_is_written(
        h: Harness, llm: ScriptedLLM) -> None:
    llm.script(text_reply("Here."))
    h.slack.hang(STATUS)
    thread = (await h.event("app_mention", text="hi"))["ts"]
    await until(lambda: h.slack.faults.hanging(STATUS))  # the sign, held on its way
    [sign] = h.slack.calls_to(STATUS)
    assert (sign.args["thread_ts"], sign.args["status"]) == (thread, "is working…")
    assert sign.args["loading_messages"] == ["Thinking…"]
    assert not h.slack.calls_to(POST) and await nothing_written()
    h.slack.release(STATUS)
    await h.answered(CHANNEL_ID, thread)
    # The turn's own loading status starts from the sign's line: it is not set twice.
    lines = [c.args.get("loading_messages") for c in h.slack.calls_to(STATUS)]
    assert lines.count(["Thinking…"]) == 1, lines


async def test_where_no_status_can_show_a_new_thread_gets_a_placeholder_that_becomes_its_answer(
        h: Harness, llm: ScriptedLLM) -> None:
    h.slack.refuse(STATUS)  # a workspace without the loading status (or its budget spent)
    llm.script(text_reply("The answer, in the placeholder's place."))
    h.slack.hang(POST)
    thread = (await h.event("app_mention", text="hi"))["ts"]
    await until(lambda: h.slack.faults.hanging(POST))
    [sign] = h.slack.calls_to(POST)
    assert sign.args["thread_ts"] == thread and sign.args["text"] == WORKING
    assert await nothing_written()
    h.slack.release(POST)

    [done] = await h.answered(CHANNEL_ID, thread)
    assert [m.ts for m in h.bot_messages(CHANNEL_ID, thread)] == [done.ts] == [sign.response["ts"]]
    assert "The answer, in the placeholder's place." in texts(done)
    placeholder = Message(CHANNEL_ID, done.ts, blocks=done.revisions[0].blocks)
    run = await ChatMessage.get(role=Role.ASSISTANT)
    assert button(placeholder, ids.STOP)["value"] == ids.run_value(run.run_id)  # its own run's Stop
    assert not h.slack.calls_to("chat.startStream")  # the turn kept the message it had


async def test_a_placeholder_whose_message_starts_no_run_is_deleted(
        h: Harness, llm: ScriptedLLM) -> None:
    h.slack.refuse(STATUS)
    h.pool.quota = RunQuota(1)
    llm.script(text_reply("First."))
    first = (await h.event("app_mention", text="one"))["ts"]
    await h.answered(CHANNEL_ID, first)
    second = (await h.event("app_mention", text="two"))["ts"]  # over the quota: refused
    await until(lambda: any("per person" in texts(m) for m in h.bot_messages(CHANNEL_ID, second)))
    await until(lambda: all(not has_button(m, ids.STOP) for m in h.bot_messages(CHANNEL_ID, second)))
    shown = h.bot_messages(CHANNEL_ID, second)
    assert [WORKING not in m.text for m in shown] == [True], [m.text for m in shown]
    assert await ChatMessage.filter(content="two").count() == 0


@pytest.mark.backend
@pytest.mark.skipif(BACKEND != "postgres", reason="SQLite's write lock holds the event ledger too")
async def test_the_sign_shows_while_the_conversations_rows_are_held(
        h: Harness, llm: ScriptedLLM, db: str) -> None:
    """A database busy with other conversations' rows: the sign does not wait for it (only the
    event ledger, on connections of its own, is written before it)."""
    llm.script(text_reply("Here."))
    async with held_writes(db):
        thread = (await h.event("app_mention", text="hi"))["ts"]
        await until(lambda: [c for c in h.slack.calls_to(STATUS) if c.ok])
        assert await nothing_written()
    await h.answered(CHANNEL_ID, thread)
