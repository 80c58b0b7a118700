"""The Bridge killed -9 and restarted mid-run, seen from a Discord thread: the turn ends showing
the reason and a Retry button; one click re-runs the message and the answer arrives; the next
message of the thread works."""

from __future__ import annotations

import asyncio

from core.bridge_stream import RUN_LOST
from core.models import ChatMessage, MessageStatus, Role
from core.runtime.pool import RunPool
from tests.bots.discord.harness import answered, bot_messages, button, mention, running_bot, showing
from tests.faults.bridge_child import BridgeChild
from tests.faults.conftest import bridge_child, child_pool  # noqa: F401
from tests.fakes.discordfake import FakeDiscord
from tests.fakes.llm_server import ScriptedLLM, text_reply

WAIT = 40.0  # a Bridge restart takes a few seconds on a busy machine


async def test_a_run_cut_by_a_bridge_restart_offers_a_retry_that_works(
    fake: FakeDiscord, child_pool: RunPool, bridge_child: BridgeChild, llm: ScriptedLLM,  # noqa: F811
) -> None:
    gate = asyncio.Event()
    llm.script(text_reply("Once upon a time", gate=gate, chunk_size=9),
               text_reply("Retried answer."), text_reply("Next answer."))
    async with running_bot(fake, child_pool):
        asked = await fake.send_user_message(mention(fake, "tell me a story"))
        thread = int(asked["id"])
        await fake.wait_until(lambda: showing(fake, thread, "Once upon"), WAIT, "the live turn")

        await bridge_child.kill()
        await bridge_child.start()
        await fake.wait_until(lambda: showing(fake, thread, RUN_LOST), WAIT, "the reason")
        failed = showing(fake, thread, RUN_LOST)
        assert failed is not None and "⚠️ Failed" in failed["embeds"][0]["description"]
        retry = button(failed, "Retry")
        assert retry["style"] == 1 and retry["emoji"]["name"] == "🔁"  # 1: primary

        await fake.click(failed["id"], retry["custom_id"])
        await fake.wait_until(lambda: answered(fake, thread, "Retried answer."), WAIT, "the retry")
        assert answered(fake, thread, "Retried answer.")["id"] == failed["id"]
        assert button(fake.message(failed["id"]), "2/2")  # the failed version is kept

        await fake.send_user_message("and then?", channel_id=thread)
        await fake.wait_until(lambda: answered(fake, thread, "Next answer."), WAIT, "the next turn")
        gate.set()
    assert len(bot_messages(fake, thread)) == 2  # one message per turn, nothing repeated
    answers = await ChatMessage.filter(role=Role.ASSISTANT).order_by("id")
    assert [(a.status, a.error) for a in answers] == [
        (MessageStatus.FAILED, RUN_LOST), (MessageStatus.SUCCESS, None), (MessageStatus.SUCCESS, None)]
