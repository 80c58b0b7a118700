"""Clarify questions on Slack: the custom-answer modal's errors, double clicks, an expired
question, clicks after a restart. A choice or a custom answer and a stopped run's question are
the conversation contract's (tests/bots/contract), on both platforms."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bots.slack import ids
from core.runtime.pool import RunPool
from core.runtime.recovery import recover
from core.store.models import ClarifyPause, PauseStatus
from tests.bots.slack.clocks import FastClock
from tests.bots.slack.harness import Harness, button, has_button, restartable, running, texts, until
from tests.bridge.harness import RunningBridge
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply
from tests.fakes.slack import FakeSlack
from tests.fakes.slack_payloads import CHANNEL_ID
from tests.support.replicas import questions_posted
from tests.support.runtime import catalogue_for
from tests.support.slack import QUESTION, asked


def user_answer(llm: ScriptedLLM) -> str:
    return json.loads(llm.requests[-1]["messages"][-1]["content"])["user_response"]


@pytest.fixture
async def admin_h(fake_slack: FakeSlack, pool: RunPool, fast_clock: FastClock) -> AsyncIterator[Harness]:
    """U0BOB is a chat admin: he may answer U0ALICE's question too."""
    async with running(fake_slack, pool, fast_clock, chat_admins=("U0BOB",)) as harness:
        yield harness


@pytest.mark.backend  # two answers race for one question's row
async def test_a_double_click_is_told_who_answered(admin_h: Harness, llm: ScriptedLLM) -> None:
    h = admin_h
    llm.script(tool_reply(ToolCall("clarify", QUESTION)), text_reply("Done."))
    thread = (await h.event("app_mention", text="paint", user="U0ALICE"))["ts"]
    question = await asked(h, thread)
    await asyncio.gather(h.click(question, ids.choice_action(0), user="U0ALICE"),
                         h.click(question, ids.choice_action(1), user="U0BOB"))  # both at once
    await h.answered(CHANNEL_ID, thread)
    winner = {"red": "U0ALICE", "blue": "U0BOB"}[user_answer(llm)]
    loser = "U0BOB" if winner == "U0ALICE" else "U0ALICE"
    told = f"already answered by <@{winner}>: {user_answer(llm)}"
    await until(lambda: any(told in t for t in h.ephemerals(loser)))
    assert not h.ephemerals(winner)
    await until(lambda: f"answered by <@{winner}>" in texts(h.slack.message(CHANNEL_ID, question.ts)))


async def test_custom_answer_through_the_modal(h: Harness, llm: ScriptedLLM) -> None:
    llm.script(tool_reply(ToolCall("clarify", QUESTION)), text_reply("Teal, then."))
    thread = (await h.event("app_mention", text="paint"))["ts"]
    question = await asked(h, thread)
    await h.click(question, ids.CLARIFY_CUSTOM, trigger=True)
    opened = await h.slack.wait_for_calls("views.open")
    assert opened[0].ok, opened[0].response
    modal = opened[0].args["view"]
    assert modal["callback_id"] == ids.CUSTOM_ANSWER_VIEW and "Which colour?" in json.dumps(modal)

    empty = await h.submit(ids.CUSTOM_ANSWER_VIEW, {ids.ANSWER_BLOCK: {ids.ANSWER_INPUT: "  "}},
                           modal["private_metadata"])
    assert empty.json()["response_action"] == "errors"
    closed = await h.submit(ids.CUSTOM_ANSWER_VIEW, {ids.ANSWER_BLOCK: {ids.ANSWER_INPUT: "teal"}},
                            modal["private_metadata"])
    assert closed.content in (b"", b"{}") or "errors" not in closed.text
    [done] = await h.answered(CHANNEL_ID, thread)
    assert "Teal, then." in texts(done) and user_answer(llm) == "teal"
    late = await h.submit(ids.CUSTOM_ANSWER_VIEW, {ids.ANSWER_BLOCK: {ids.ANSWER_INPUT: "pink"}},
                          modal["private_metadata"])
    assert "already answered by <@U0USER>: teal" in late.json()["errors"][ids.ANSWER_BLOCK]


async def test_an_expired_question_says_so(h: Harness, llm: ScriptedLLM) -> None:
    llm.script(tool_reply(ToolCall("clarify", QUESTION)), text_reply("never"))
    thread = (await h.event("app_mention", text="paint"))["ts"]
    question = await asked(h, thread)
    await ClarifyPause.all().update(status=PauseStatus.EXPIRED)
    await h.click(question, ids.choice_action(0))
    await h.click(question, ids.CLARIFY_CUSTOM, trigger=True)
    await until(lambda: len([t for t in h.ephemerals() if "expired" in t]) == 2)
    assert not h.slack.calls_to("views.open")
    run = h.pool.active()[0]
    await h.pool.stop(run.run_id)


async def test_a_button_works_after_a_restart(
    db: str, bridge: RunningBridge, llm: ScriptedLLM, skills_dir: Path,
    fake_slack: FakeSlack, fast_clock: FastClock,
) -> None:
    llm.script(tool_reply(ToolCall("clarify", QUESTION)), text_reply("Blue, after the restart."))
    async with restartable(bridge.url, catalogue_for(llm, skills_dir), fake_slack, fast_clock) as serve:
        async with serve() as h:
            thread, question = await _asked_and_stored(h)
        async with serve() as h2:
            assert await recover(h2.pool) == 1
            await h2.click(question, ids.choice_action(1))
            [done] = await h2.answered(CHANNEL_ID, thread)
    assert "Blue, after the restart." in texts(done) and user_answer(llm) == "blue"
    assert len(h2.bot_messages(CHANNEL_ID, thread)) == 2  # the same live message, one question
    assert button(done, ids.REGENERATE)


async def test_a_question_posted_by_a_process_that_died_before_storing_its_ts_is_found_again(
    db: str, bridge: RunningBridge, llm: ScriptedLLM, skills_dir: Path,
    fake_slack: FakeSlack, fast_clock: FastClock,
) -> None:
    """A process that died between a question's post and storing its ts (its post marked begun,
    no ts): the run recovered here finds the question in the thread by its metadata instead of
    posting it again, and the click on it shows who answered there."""
    llm.script(tool_reply(ToolCall("clarify", QUESTION)), text_reply("Blue, after the restart."))
    async with restartable(bridge.url, catalogue_for(llm, skills_dir), fake_slack, fast_clock) as serve:
        async with serve() as h:
            thread, question = await _asked_and_stored(h)
        await ClarifyPause.all().update(platform_refs={"slack": {"posting": True}})
        async with serve() as h2:
            assert await recover(h2.pool) == 1
            await until(lambda: _ts_stored(question.ts))
            await h2.click(question, ids.choice_action(1))
            [done] = await h2.answered(CHANNEL_ID, thread)
            await until(lambda: _shows(fake_slack, question.ts, "answered by"))
    assert "Blue, after the restart." in texts(done)
    assert len(h2.bot_messages(CHANNEL_ID, thread)) == 2  # the live message and one question


async def _asked_and_stored(h: Harness) -> tuple[str, Any]:
    """A mention whose run asks QUESTION: its thread and the question, once its ts is stored
    (the post returned; a restart reuses it)."""
    thread = (await h.event("app_mention", text="paint"))["ts"]
    question = await asked(h, thread)
    await until(questions_posted)
    return thread, question


async def _ts_stored(ts: str) -> bool:
    pause = await ClarifyPause.get()
    return (pause.platform_refs or {}).get("slack", {}).get("ts") == ts


async def _shows(slack: FakeSlack, ts: str, words: str) -> bool:
    return words in texts(slack.message(CHANNEL_ID, ts))


async def test_a_stopped_turn_ends_at_once_though_its_question_edit_is_held_up(
        h: Harness, llm: ScriptedLLM) -> None:
    """The answer goes first: a turn stopped while it asks ends at once (its stream stopped)
    though the edit of its question is held up (chat.update not answering, as when the
    workspace's budget is spent); the question says it expired once that edit goes through."""
    llm.script(tool_reply(ToolCall("clarify", QUESTION)), text_reply("never"))
    thread = (await h.event("app_mention", text="paint"))["ts"]
    question = await asked(h, thread)
    h.slack.hang("chat.update")
    await h.pool.stop(h.pool.active()[0].run_id)
    [done] = await h.answered(CHANNEL_ID, thread)
    assert "Stopped" in texts(done) and not done.streaming
    # The edit may still wait for the question's own edit budget: release it once it is held
    # (a call arriving after `release` would take the hang and be held for good).
    await until(lambda: h.slack.faults.hanging("chat.update") == 1)
    assert has_button(h.slack.message(CHANNEL_ID, question.ts), ids.CLARIFY_CUSTOM)  # not yet
    h.slack.release()
    await until(lambda: not has_button(h.slack.message(CHANNEL_ID, question.ts), ids.CLARIFY_CUSTOM))
