"""The Bridge killed -9 and restarted mid-run, seen from a Slack thread: the live message says
the turn resumed after a restart and ends with the whole answer, in the same message; the next
message of the thread works."""

from __future__ import annotations

import asyncio

from bots.slack import ids
from core.bridge.stream import RUN_LOST
from core.models import ChatMessage, MessageStatus, Role
from core.runtime.pool import RunPool
from tests.bots.slack.clocks import FastClock
from tests.bots.slack.harness import has_button, running, texts, until
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.fakes.slack import FakeSlack
from tests.fakes.slack_payloads import CHANNEL_ID
from tests.faults.bridge_child import BridgeChild

DEADLINE = 40.0  # a Bridge restart takes a few seconds on a busy machine


async def test_a_run_cut_by_a_bridge_restart_resumes_in_the_same_message(
    fake_slack: FakeSlack, child_pool: RunPool, bridge_child: BridgeChild,
    llm: ScriptedLLM, fast_clock: FastClock,
) -> None:
    gate, again = asyncio.Event(), asyncio.Event()
    llm.script(text_reply("Once upon a time", gate=gate, chunk_size=9),
               text_reply("Once upon a time, the end.", gate=again, chunk_size=9),
               text_reply("Next answer."))
    async with running(fake_slack, child_pool, fast_clock) as h:
        thread = (await h.event("app_mention", text="tell me a story"))["ts"]
        [live] = await until(lambda: [m for m in h.bot_messages(CHANNEL_ID, thread)
                                      if "Once upon" in texts(m)])

        await bridge_child.kill()
        await bridge_child.start()
        resumed = await until(lambda: (m := fake_slack.message(CHANNEL_ID, live.ts))
                              and "Resumed after a restart" in texts(m) and m, DEADLINE)
        assert "Failed" not in texts(resumed)
        again.set()
        done = await until(lambda: (m := fake_slack.message(CHANNEL_ID, live.ts))
                           and "Once upon a time, the end." in texts(m)
                           and has_button(m, ids.REGENERATE) and m, DEADLINE)
        assert "Failed" not in texts(done) and RUN_LOST not in texts(done)

        await h.event("thread_message", text="and then?", thread_ts=thread)
        await until(lambda: [m for m in h.bot_messages(CHANNEL_ID, thread)
                             if "Next answer." in texts(m) and has_button(m, ids.REGENERATE)], DEADLINE)
        gate.set()
    assert len(h.bot_messages(CHANNEL_ID, thread)) == 2  # one message per turn, nothing repeated
    answers = await ChatMessage.filter(role=Role.ASSISTANT).order_by("id")
    assert [(a.status, a.error) for a in answers] == [
        (MessageStatus.SUCCESS, None), (MessageStatus.SUCCESS, None)]
