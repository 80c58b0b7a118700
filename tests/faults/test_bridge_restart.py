"""The Bridge restarted mid-run (issue 8 §4): the run ends FAILED at once with a reason, and the
next run works; a Bridge that is only down for a while loses nothing; one that stays down
fails the run after a bounded backoff."""

from __future__ import annotations

import asyncio

from core import sessions
from core.bridge_client import BridgeClient
from core.bridge_stream import RUN_LOST, StreamPolicy
from core.models import MessageStatus
from core.runtime.pool import RunPool
from tests.core.runtime.conftest import catalogue_for
from tests.core.runtime.waiting import finished, message, stored_seqs, until
from tests.faults.bridge_child import BridgeChild
from tests.fakes.fake_bridge import FakeBridge, Stall, ev
from tests.fakes.llm_server import ScriptedLLM, text_reply


async def test_a_run_cut_by_a_bridge_restart_fails_with_the_reason_and_the_next_run_works(
    child_pool: RunPool, bridge_child: BridgeChild, llm: ScriptedLLM
) -> None:
    gate = asyncio.Event()
    llm.script(text_reply("Once upon a time", gate=gate, chunk_size=9), text_reply("Back again."))
    session = (await sessions.create_session()).id
    run = await child_pool.start(session, "tell me a story")
    await until(child_pool, run.run_id, lambda u: "Once upon" in str(u.state.thinking))

    await bridge_child.kill()
    await bridge_child.start()
    failed = await finished(child_pool, run.run_id)
    assert (failed.status, failed.error) == (MessageStatus.FAILED, RUN_LOST)
    stored = await message(failed.message_id)
    assert (stored.status, stored.error) == (MessageStatus.FAILED, RUN_LOST)
    assert await stored_seqs(failed.message_id)  # what streamed before the restart is kept

    again = await finished(child_pool, (await child_pool.start(session, "try again")).run_id)
    assert (again.status, again.state.final_text) == (MessageStatus.SUCCESS, "Back again.")
    gate.set()


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
    db: str, fake_bridge: FakeBridge, skills_dir
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
    assert "unreachable" in failed.error and "after 6 reconnects in 15.5 s" in failed.error
    assert (await message(failed.message_id)).error == failed.error
