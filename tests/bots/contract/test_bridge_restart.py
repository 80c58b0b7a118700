"""The Bridge killed -9 and restarted mid-run, seen from a Slack thread and a Discord thread
(one scenario, both platforms): the live message says the turn resumed after a restart and
ends with the whole answer, in the same message; the next message of the thread works.

A real Bridge in a child process, so not in the table's fake-Bridge pool: each platform once
(Slack's streamed turn and Discord), not the edit-based Slack variant as well."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from core.agent.bridge.stream import RUN_LOST
from core.store.models import ChatMessage, MessageStatus, Role
from core.runtime.pool import RunPool
from tests.bots.contract.drivers import talking
from tests.faults.bridge_child import BridgeChild
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.fakes.changes import WAIT


@pytest.mark.parametrize("platform", ["slack", "discord"], indirect=True)
async def test_a_run_cut_by_a_bridge_restart_resumes_in_the_same_message(
    platform: tuple[str, Any], child_pool: RunPool, bridge_child: BridgeChild,
    llm: ScriptedLLM,
) -> None:
    gate, again = asyncio.Event(), asyncio.Event()
    llm.script(text_reply("Once upon a time", gate=gate, chunk_size=9),
               text_reply("Once upon a time, the end.", gate=again, chunk_size=9),
               text_reply("Next answer."))
    async with talking(platform, child_pool) as chat:
        conv = await chat.start("tell me a story")
        live = await chat.shown(conv, "Once upon", wait=WAIT)  # a fresh Bridge's first agent

        await bridge_child.kill()
        await bridge_child.start()
        resumed = await chat.shown(conv, "Resumed after a restart", wait=WAIT)
        assert chat.key(resumed) == chat.key(live) and "Failed" not in chat.showing(resumed)
        again.set()
        done = await chat.shown(conv, "Once upon a time, the end.", "regenerate", wait=WAIT)
        assert chat.key(done) == chat.key(live)
        assert "Failed" not in chat.showing(done) and RUN_LOST not in chat.showing(done)

        await chat.say(conv, "and then?")
        await chat.shown(conv, "Next answer.", "regenerate", wait=WAIT)
        gate.set()
        assert len(chat.posted(conv)) == 2, "one message per turn, nothing repeated"
    answers = await ChatMessage.filter(role=Role.ASSISTANT).order_by("id")
    assert [(a.status, a.error) for a in answers] == [
        (MessageStatus.SUCCESS, None), (MessageStatus.SUCCESS, None)]
