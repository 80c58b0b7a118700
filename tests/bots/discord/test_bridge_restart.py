"""The Bridge killed -9 and restarted mid-run, seen from a Discord thread: the live message says
the turn resumed after a restart and ends with the whole answer, in the same message; the next
message of the thread works."""

from __future__ import annotations

import asyncio

from core.models import ChatMessage, MessageStatus, Role
from core.runtime.pool import RunPool
from tests.bots.discord.harness import answered, bot_messages, mention, running_bot, showing
from tests.fakes.discordfake import FakeDiscord
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.faults.bridge_child import BridgeChild

WAIT = 40.0  # a Bridge restart takes a few seconds on a busy machine


async def test_a_run_cut_by_a_bridge_restart_resumes_in_the_same_message(
    fake: FakeDiscord, child_pool: RunPool, bridge_child: BridgeChild, llm: ScriptedLLM,
) -> None:
    gate, again = asyncio.Event(), asyncio.Event()
    llm.script(text_reply("Once upon a time", gate=gate, chunk_size=9),
               text_reply("Once upon a time, the end.", gate=again, chunk_size=9),
               text_reply("Next answer."))
    async with running_bot(fake, child_pool):
        asked = await fake.send_user_message(mention(fake, "tell me a story"))
        thread = int(asked["id"])
        await fake.wait_until(lambda: showing(fake, thread, "Once upon"), WAIT, "the live turn")
        live = showing(fake, thread, "Once upon")

        await bridge_child.kill()
        await bridge_child.start()
        await fake.wait_until(lambda: showing(fake, thread, "Resumed after a restart"), WAIT,
                              "the notice")
        resumed = showing(fake, thread, "Resumed after a restart")
        assert resumed["id"] == live["id"] and "Failed" not in str(resumed["embeds"])
        again.set()
        await fake.wait_until(lambda: answered(fake, thread, "Once upon a time, the end."), WAIT,
                              "the answer")
        assert answered(fake, thread, "Once upon a time, the end.")["id"] == live["id"]

        await fake.send_user_message("and then?", channel_id=thread)
        await fake.wait_until(lambda: answered(fake, thread, "Next answer."), WAIT, "the next turn")
        gate.set()
    assert len(bot_messages(fake, thread)) == 2  # one message per turn, nothing repeated
    answers = await ChatMessage.filter(role=Role.ASSISTANT).order_by("id")
    assert [(a.status, a.error) for a in answers] == [
        (MessageStatus.SUCCESS, None), (MessageStatus.SUCCESS, None)]
