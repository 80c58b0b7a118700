"""The Bridge restarted mid-run (issue 12 §2): the run goes on from its last checkpoint on the
new Bridge process (a clarify waits for its answer there), and the next run works; a Bridge that
is only down for a while loses nothing; one that stays down fails the run after a bounded
backoff."""

from __future__ import annotations

import asyncio
import json

import pytest

from core.agent.bridge.client import BridgeClient
from core.agent.bridge.stream import StreamPolicy
from core.chat import sessions
from core.chat.attachments import FileReader
from core.conversation import turns
from core.errors import BridgeUnavailable
from core.runtime.pool import RunPool
from core.store.models import ChatMessageLog, MessageStatus, PauseStatus, UsageCall, UsageDay
from tests.core.runtime.waiting import finished, message, stored_seqs, until
from tests.fakes.fake_bridge import FakeBridge, Stall, ev
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply
from tests.faults.bridge_child import BridgeChild
from tests.support.runtime import catalogue_for

TODO = {"todos": [{"id": "1", "content": "tell it", "status": "in_progress"}]}


async def test_a_run_cut_mid_step_by_a_bridge_kill_goes_on_from_its_last_step(
    child_pool: RunPool, bridge_child: BridgeChild, llm: ScriptedLLM
) -> None:
    gate = asyncio.Event()
    llm.script(tool_reply(ToolCall("todo", TODO, call_id="call-todo")),
               text_reply("Once upon a time", gate=gate, chunk_size=9),
               text_reply("Once upon a time, the end."), text_reply("Back again."))
    session = (await sessions.create_session()).id
    run = await child_pool.start(session, "tell me a story")
    await until(child_pool, run.run_id, lambda u: "Once upon" in str(u.state.thinking))

    await bridge_child.kill()  # mid-step: the second model call is streaming
    await bridge_child.start()
    done = await finished(child_pool, run.run_id)
    assert (done.status, done.state.final_text) == (MessageStatus.SUCCESS,
                                                    "Once upon a time, the end.")
    assert (await message(done.message_id)).content == "Once upon a time, the end."
    seqs = await stored_seqs(done.message_id)
    assert seqs == sorted(set(seqs))  # every row once, the ids going on after the restart
    assert await ChatMessageLog.filter(message_id=done.message_id, kind="status",
                                       meta_json__contains="resumed").count() == 1
    again_asked = llm.requests[2]["messages"]  # the interrupted step ran again, the todo not
    assert [m["role"] for m in again_asked if m["role"] != "system"] == ["user", "assistant",
                                                                          "tool"]
    assert sum(1 for r in llm.requests for m in r["messages"][-1:] if m["role"] == "user") == 1

    again = await finished(child_pool, (await child_pool.start(session, "try again")).run_id)
    assert (again.status, again.state.final_text) == (MessageStatus.SUCCESS, "Back again.")
    gate.set()


@pytest.mark.parametrize("read", [False, True], ids=["unread-at-the-kill", "read-and-kept"])
async def test_guidance_is_read_once_across_a_bridge_kill(
    child_pool: RunPool, bridge_child: BridgeChild, llm: ScriptedLLM, read: bool
) -> None:
    """A person steers the turn (BUSY_MODE steer) while a step streams, then the Bridge dies
    while the second step streams. Unread at the kill (given during the second step), the
    guidance is given to the agent on the new Bridge again, which puts it in the checkpoint's
    last tool result; read before (given during the first step, its tool result carries it and
    the checkpoint keeps it), it is not given again. Either way the model sees it once."""
    first, second = asyncio.Event(), asyncio.Event()
    again = {"todos": [{"id": "1", "content": "tell it", "status": "completed"}]}
    llm.script(tool_reply(ToolCall("todo", TODO, call_id="call-1"), gate=first),
               tool_reply(ToolCall("todo", again, call_id="call-2"), text="Writing it down",
                          gate=second, chunk_size=7),
               tool_reply(ToolCall("todo", again, call_id="call-2")),
               text_reply("A story about a cat."))
    session = await sessions.create_session()
    run = await child_pool.start(session.id, "tell me a story")
    steer = turns.Arrival(session, False, "make it about a cat", "U1", "m-2", busy_mode="steer")
    if read:  # given while the first step streams, held
        await llm.wait_for_requests(1)
        assert (await turns.take(child_pool, steer, FileReader(), _nothing_said, 0)).steered
    first.set()
    # the second step streams (held): every event before it, the first step's checkpoint
    # among them, has reached the runtime
    await until(child_pool, run.run_id, lambda u: "Writing" in str(u.state.thinking))
    if not read:
        assert (await turns.take(child_pool, steer, FileReader(), _nothing_said, 0)).steered

    await bridge_child.kill()
    await bridge_child.start()
    done = await finished(child_pool, run.run_id)
    assert (done.status, done.state.final_text) == (MessageStatus.SUCCESS, "A story about a cat.")

    def times(request: dict) -> int:
        return sum(str(m["content"]).count("make it about a cat") for m in request["messages"]
                   if m["role"] == "tool")

    assert [times(r) for r in llm.requests] == ([0, 1, 1, 1] if read else [0, 0, 1, 1])
    second.set()


async def _nothing_said(notices: tuple[str, ...]) -> None:
    raise AssertionError(f"nothing is said of a steer: {notices}")


async def test_each_call_is_counted_once_across_a_bridge_kill_mid_turn(
    child_pool: RunPool, bridge_child: BridgeChild, llm: ScriptedLLM
) -> None:
    gate = asyncio.Event()
    llm.script(tool_reply(ToolCall("todo", TODO, call_id="call-todo")),
               text_reply("Counting", gate=gate, chunk_size=8, completion_tokens=99),
               text_reply("Counted.", prompt_tokens=120, completion_tokens=12))
    run = await child_pool.start((await sessions.create_session()).id, "count", author="U1")
    await until(child_pool, run.run_id, lambda u: "Counting" in str(u.state.thinking))

    await bridge_child.kill()  # the second call streams: it never reported its usage
    await bridge_child.start()
    done = await finished(child_pool, run.run_id)

    assert done.status == MessageStatus.SUCCESS and len(llm.requests) == 3
    calls = await UsageCall.filter(message_id=done.message_id).order_by("seq")
    # The first call once (the continuation goes on after it), the cut one not at all, the
    # one made again once: what the model reported, each call once.
    assert [(c.prompt_tokens, c.completion_tokens) for c in calls] == [(100, 10), (120, 12)]
    assert len({c.seq for c in calls}) == 2
    [day] = await UsageDay.filter(dimension="user")
    assert (day.calls, day.prompt_tokens, day.completion_tokens) == (2, 220, 22)
    assert (done.state.usage.calls, done.state.usage.tokens) == (2, 242)
    gate.set()


async def test_a_clarify_survives_a_bridge_kill_and_its_answer_finishes_the_turn(
    child_pool: RunPool, bridge_child: BridgeChild, llm: ScriptedLLM
) -> None:
    llm.script(tool_reply(ToolCall("clarify", {"question": "Tea or coffee?",
                                               "choices": ["tea", "coffee"]}, call_id="call-ask")),
               text_reply("Tea, then."))
    run = await child_pool.start((await sessions.create_session()).id, "a drink?")
    asked = await until(child_pool, run.run_id, lambda u: u.pause is not None)

    await bridge_child.kill()
    await bridge_child.start()  # knows nothing of the run or its question
    await child_pool.bridge.health()
    waiting = await until(child_pool, run.run_id, lambda u: True)
    assert waiting.status == MessageStatus.RUNNING and waiting.pause.status == PauseStatus.UNANSWERED
    outcome = await child_pool.answer(asked.pause.clarify_id, "tea", "U1")
    assert outcome.accepted and outcome.pause.status == PauseStatus.ANSWERED
    done = await finished(child_pool, run.run_id)
    assert (done.status, done.state.final_text) == (MessageStatus.SUCCESS, "Tea, then.")
    assert done.message_id == asked.message_id
    result = llm.requests[-1]["messages"][-1]
    assert result["role"] == "tool" and result["tool_call_id"] == "call-ask"
    assert json.loads(result["content"])["user_response"] == "tea"
    seqs = await stored_seqs(done.message_id)
    assert seqs == sorted(set(seqs))


class CountedSleeps:
    """The stream's backoff, recorded; the hook restarts the fake Bridge after some of them."""

    def __init__(self) -> None:
        self.delays: list[float] = []
        self.reached = asyncio.Event()
        self.wanted = 0

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
        if len(self.delays) >= self.wanted:
            self.reached.set()
        await asyncio.sleep(0)


POLICY = StreamPolicy(read_timeout=2.0, connect_timeout=1.0, backoff_base=0.5, backoff_cap=4.0,
                      max_reconnects=6)


async def test_a_bridge_down_for_a_while_loses_no_event_and_backs_off(
    db: str, fake_bridge: FakeBridge, skills_dir
) -> None:
    fake_bridge.default_script = lambda run_id: [
        *[ev("text", text=f"w{i} ") for i in range(3)], Stall("hold"),
        *[ev("text", text=f"v{i} ") for i in range(3)], ev("done", final_text="all there"),
    ]
    sleeps = CountedSleeps()
    sleeps.wanted = 4
    async with BridgeClient(fake_bridge.url, policy=POLICY, sleep=sleeps) as client:
        pool = RunPool(client, catalogue_for(None, skills_dir))
        await pool.open()
        try:
            session = (await sessions.create_session()).id
            run = await pool.start(session, "go")
            await until(pool, run.run_id, lambda u: u.state.last_seq == 3)
            await fake_bridge.stop()  # refuses connections: four reconnects fail
            await asyncio.wait_for(sleeps.reached.wait(), 20)
            await fake_bridge.start()
            done = await finished(pool, run.run_id)
        finally:
            await pool.close()
    assert (done.status, done.state.final_text) == (MessageStatus.SUCCESS, "all there")
    assert await stored_seqs(done.message_id) == list(range(1, 8))
    assert sleeps.delays[:4] == [0.5, 1.0, 2.0, 4.0]  # exponential, capped at 4


async def test_a_bridge_that_stays_down_fails_the_run_after_a_bounded_backoff(
    db: str, fake_bridge: FakeBridge, skills_dir, caplog: pytest.LogCaptureFixture
) -> None:
    fake_bridge.default_script = lambda run_id: [ev("text", text="hi"), Stall("hold"),
                                                 ev("done", final_text="never")]
    sleeps = CountedSleeps()
    async with BridgeClient(fake_bridge.url, policy=POLICY, sleep=sleeps) as client:
        pool = RunPool(client, catalogue_for(None, skills_dir))
        await pool.open()
        try:
            run = await pool.start((await sessions.create_session()).id, "go")
            await until(pool, run.run_id, lambda u: u.state.last_seq == 1)
            await fake_bridge.stop()
            failed = await finished(pool, run.run_id)
        finally:
            await pool.close()
    assert failed.status == MessageStatus.FAILED
    assert sleeps.delays == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]  # 15.5 s of patience, then the reason
    assert failed.error == BridgeUnavailable.PUBLIC  # plain words; how it failed is logged
    assert any("after 6 reconnects in 15.5 s" in r.getMessage() for r in caplog.records)
    assert (await message(failed.message_id)).error == failed.error
