"""kill -9 of one of two real Bridge processes (HERMES_BRIDGE_URL=a,b) mid-turn: the turn goes on
from its last checkpoint on the other Bridge (a clarify waits there for its answer), and the
session's next turn goes to the Bridge that is up."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from core.agent.bridge.client import BridgeClient
from core.agent.bridge.fleet import BridgeFleet
from core.agent.bridge.stream import StreamPolicy
from core.chat import sessions
from core.runtime.pool import RunPool
from core.store.models import ChatMessage, MessageStatus
from tests.conftest import TEST_CONFIG_YAML
from tests.core.runtime.waiting import finished, stored_seqs, until
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply
from tests.faults.bridge_child import BridgeChild
from tests.support.runtime import catalogue_for

# A killed Bridge refuses connections at once: a few quick reconnects, then the other Bridge.
QUICK = StreamPolicy(read_timeout=5.0, connect_timeout=1.0, backoff_base=0.05, backoff_cap=0.2,
                     max_reconnects=3)
TODO = {"todos": [{"id": "1", "content": "tell it", "status": "in_progress"}]}


class Pair:
    def __init__(self, children: list[BridgeChild], pool: RunPool, fleet: BridgeFleet) -> None:
        self.children = children
        self.pool = pool
        self.fleet = fleet

    def home_of(self, session_key: str) -> tuple[BridgeChild, BridgeChild]:
        """The Bridge the session's runs go to, and the other one."""
        home = next(c for c in self.children if c.url == self.fleet.place(session_key))
        return home, next(c for c in self.children if c is not home)


@pytest.fixture
async def pair(db: str, tmp_path: Path, llm: ScriptedLLM, skills_dir: Path
               ) -> AsyncIterator[Pair]:
    token = "shared-bridge-token"
    async with AsyncExitStack() as stack:
        children = []
        for name in ("a", "b"):
            home = tmp_path / f"hermes-home-{name}"
            home.mkdir()
            (home / "config.yaml").write_text(TEST_CONFIG_YAML, encoding="utf-8")
            child = BridgeChild(home, token=token)
            await child.start()
            stack.push_async_callback(child.kill)
            children.append(child)
        fleet = BridgeFleet({c.url: BridgeClient(c.url, token=token, policy=QUICK)
                             for c in children})
        stack.push_async_callback(fleet.aclose)
        pool = RunPool(fleet, catalogue_for(llm, skills_dir))
        await pool.open()
        stack.push_async_callback(pool.close)
        yield Pair(children, pool, fleet)


async def test_a_turn_cut_by_a_kill_of_its_bridge_goes_on_on_the_other(
    pair: Pair, llm: ScriptedLLM
) -> None:
    gate = asyncio.Event()
    llm.script(tool_reply(ToolCall("todo", TODO, call_id="call-todo")),
               text_reply("Once upon a time", gate=gate, chunk_size=9),
               text_reply("Once upon a time, the end."), text_reply("Next one."))
    session = await sessions.create_session()
    home, spare = pair.home_of(session.hermes_session)
    run = await pair.pool.start(session.id, "tell me a story")
    await until(pair.pool, run.run_id, lambda u: "Once upon" in str(u.state.thinking))

    await home.kill()  # mid-step: the second model call is streaming

    done = await finished(pair.pool, run.run_id)
    assert (done.status, done.state.final_text) == (MessageStatus.SUCCESS,
                                                    "Once upon a time, the end.")
    assert (await ChatMessage.get(id=run.message_id)).bridge == spare.url
    seqs = await stored_seqs(done.message_id)
    assert seqs == sorted(set(seqs)), "every log row once"
    again_asked = llm.requests[2]["messages"]  # the cut step ran again on the other, the todo not
    assert [m["role"] for m in again_asked if m["role"] != "system"] == ["user", "assistant", "tool"]

    nxt = await finished(pair.pool, (await pair.pool.start(session.id, "another")).run_id)
    assert (nxt.status, nxt.state.final_text) == (MessageStatus.SUCCESS, "Next one.")
    assert (await ChatMessage.get(id=nxt.message_id)).bridge == spare.url
    gate.set()


async def test_a_question_asked_on_a_killed_bridge_is_answered_and_finished_on_the_other(
    pair: Pair, llm: ScriptedLLM
) -> None:
    llm.script(tool_reply(ToolCall("clarify", {"question": "Tea or coffee?",
                                               "choices": ["tea", "coffee"]}, call_id="call-ask")),
               text_reply("Tea, then."))
    session = await sessions.create_session()
    home, spare = pair.home_of(session.hermes_session)
    run = await pair.pool.start(session.id, "a drink?")
    asked = await until(pair.pool, run.run_id, lambda u: u.pause is not None)

    await home.kill()
    outcome = await pair.pool.answer(asked.pause.clarify_id, "tea", "U1")

    assert outcome.accepted
    done = await finished(pair.pool, run.run_id)
    assert (done.status, done.state.final_text) == (MessageStatus.SUCCESS, "Tea, then.")
    result = llm.requests[-1]["messages"][-1]
    assert result["role"] == "tool" and result["tool_call_id"] == "call-ask"
    assert json.loads(result["content"])["user_response"] == "tea"
    assert (await ChatMessage.get(id=run.message_id)).bridge == spare.url
