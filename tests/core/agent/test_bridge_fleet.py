"""Several Bridges (HERMES_BRIDGE_URL=a,b): runs placed by session, a Bridge that is down
skipped and its turn in flight continued on another, Stop and answers sent to the Bridge that
holds the run from any replica. Two fake Bridges on 127.0.0.1; run pools stand for replicas."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from core.agent.bridge.client import BridgeClient
from core.agent.bridge.fleet import BridgeFleet
from core.chat import sessions
from core.conversation import turns
from core.runtime.pool import RunPool
from core.store.models import ChatMessage, ChatSession, MessageStatus
from tests.core.runtime.waiting import finished, until
from tests.fakes.fake_bridge import FakeBridge, Stall, WaitAnswer, ev
from tests.support.runtime import FAST, catalogue_for


class Clock:
    """The fleet's monotonic clock, moved by the test (a Bridge's cooldown passes at once)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Fleet:
    """Two fake Bridges and, per replica, a run pool over a fleet of both."""

    def __init__(self, fakes: list[FakeBridge], clock: Clock, pools: list[RunPool]) -> None:
        self.fakes = fakes
        self.clock = clock
        self.pools = pools

    def of(self, url: str) -> FakeBridge:
        return next(f for f in self.fakes if f.url == url)

    def fake_for(self, session_key: str, pool: int = 0) -> FakeBridge:
        """The fake Bridge the session's runs go to now."""
        fleet = self.pools[pool].bridge
        assert isinstance(fleet, BridgeFleet)
        return self.of(fleet.place(session_key))

    async def new_session(self) -> tuple[ChatSession, FakeBridge]:
        """A session and the fake Bridge its runs go to."""
        session = await sessions.create_session()
        return session, self.fake_for(session.hermes_session)

    def other(self, fake: FakeBridge) -> FakeBridge:
        return next(f for f in self.fakes if f is not fake)


def new_fleet(urls: list[str], clock: Clock) -> BridgeFleet:
    return BridgeFleet({url: BridgeClient(url, policy=FAST) for url in urls}, cooldown=30.0,
                       monotonic=clock)


@pytest.fixture
async def two(db: str, skills_dir: Path) -> AsyncIterator[Fleet]:
    clock = Clock()
    async with AsyncExitStack() as stack:
        fakes = [await stack.enter_async_context(FakeBridge(heartbeat=0.2)) for _ in range(2)]
        pools = []
        for _ in range(2):  # two replicas, each with its own fleet of the same two Bridges
            fleet = new_fleet([f.url for f in fakes], clock)
            stack.push_async_callback(fleet.aclose)
            pool = RunPool(fleet, catalogue_for(None, skills_dir))
            await pool.open()
            stack.push_async_callback(pool.close)
            pools.append(pool)
        yield Fleet(fakes, clock, pools)


def test_placement_is_by_session_and_moves_only_the_sessions_of_a_bridge_that_leaves() -> None:
    clock = Clock()
    three = BridgeFleet(dict.fromkeys(("http://a", "http://b", "http://c"), None),  # type: ignore[arg-type]
                        monotonic=clock)
    two = BridgeFleet(dict.fromkeys(("http://a", "http://b"), None), monotonic=clock)  # type: ignore[arg-type]
    keys = [f"chat-{n}" for n in range(300)]
    placed = {key: three.place(key) for key in keys}
    assert {three.place(key) for key in keys} == {"http://a", "http://b", "http://c"}
    assert all(three.place(key) == placed[key] for key in keys), "the same session, the same Bridge"
    for key in keys:
        if placed[key] != "http://c":
            assert two.place(key) == placed[key], "a session of a Bridge that stayed moved"


async def test_a_sessions_turns_stay_on_one_bridge_and_sessions_spread_over_both(two: Fleet) -> None:
    pool = two.pools[0]
    used: set[str] = set()
    for _ in range(12):
        session = await sessions.create_session()
        first = await finished(pool, (await pool.start(session.id, "one")).run_id)
        second = await finished(pool, (await pool.start(session.id, "two")).run_id)
        holders = {(await ChatMessage.get(id=u.message_id)).bridge for u in (first, second)}
        expected = two.fake_for(session.hermes_session)
        assert holders == {expected.url}, "both turns on the session's Bridge, and stored so"
        assert {first.run_id, second.run_id} <= set(expected.runs)
        used.add(expected.url)
    assert used == {f.url for f in two.fakes}, "twelve sessions all on one Bridge"


async def test_a_bridge_down_its_turn_in_flight_continues_on_the_other_and_new_turns_follow(
    two: Fleet
) -> None:
    pool = two.pools[0]
    session, home = await two.new_session()
    spare = two.other(home)
    home.default_script = lambda run_id: [ev("text", text="working"), Stall("forever")]
    run = await pool.start(session.id, "long job")
    await until(pool, run.run_id, lambda u: u.state.last_seq >= 1)

    await home.stop()  # kill -9 of the Bridge: its streams are cut, its port refuses

    done = await finished(pool, run.run_id)
    assert done.status == MessageStatus.SUCCESS and done.state.final_text == f"done {run.run_id}"
    [resumed] = spare.requests_to("POST", "/run")
    assert resumed.body["run_id"] == run.run_id and resumed.body["resume"]["first_event_id"] == 2
    assert (await ChatMessage.get(id=run.message_id)).bridge == spare.url

    later = await finished(pool, (await pool.start(session.id, "next")).run_id)
    assert later.run_id in spare.runs, "a new turn went to the Bridge that is down"

    await home.start()  # back on its port; once its cooldown passed it takes its sessions back
    home.default_script = lambda run_id: [ev("done", final_text="home again")]
    two.clock.now += 60
    back = await finished(pool, (await pool.start(session.id, "and now")).run_id)
    assert back.run_id in home.runs and back.state.final_text == "home again"


async def test_stop_and_answers_from_another_replica_reach_the_bridge_holding_the_run(
    two: Fleet
) -> None:
    driver, other = two.pools
    session, home = await two.new_session()
    home.default_script = lambda run_id: [
        ev("clarify_request", clarify_id=f"q-{run_id}", question="Which?", choices=["x", "y"]),
        WaitAnswer(f"q-{run_id}"), ev("text", text="thanks"), Stall("forever")]
    run = await driver.start(session.id, "ask me")
    asked = await until(driver, run.run_id, lambda u: u.pause is not None)

    outcome = await other.answer(asked.pause.clarify_id, "y", "U2")  # B drives nothing

    assert outcome.accepted
    assert home.runs[run.run_id].answers == {asked.pause.clarify_id: "y"}
    assert not two.other(home).requests_to("POST", "/clarify"), "the answer went to both"
    await until(driver, run.run_id, lambda u: "thanks" in str(u.state.thinking))

    stopped = await turns.stop(other, run.run_id)

    assert stopped.status == MessageStatus.STOPPED and home.runs[run.run_id].aborted
    assert not two.other(home).requests_to("POST", "/runs"), "the abort went to both"
    assert (await finished(driver, run.run_id)).status == MessageStatus.STOPPED


async def test_health_reports_each_bridge(two: Fleet) -> None:
    fleet = two.pools[0].bridge
    assert isinstance(fleet, BridgeFleet)
    down = two.fakes[1]
    await down.stop()
    reports = await fleet.reports()
    assert [(r.name, r.health is not None) for r in reports] == [
        (two.fakes[0].url, True), (down.url, False)]
    assert (await fleet.health()).status == "ok", "one Bridge up is a fleet that works"
    assert not fleet.is_up(down.url)


CHECKPOINTED = [{"role": "user", "content": "job"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "call-1", "type": "function",
                     "function": {"name": "clarify", "arguments": "{\"question\": \"Which?\"}"}}]}]


async def test_a_question_of_a_bridge_that_died_is_answered_and_the_turn_goes_on_elsewhere(
    two: Fleet
) -> None:
    driver, other = two.pools
    session, home = await two.new_session()
    spare = two.other(home)
    home.default_script = lambda run_id: [
        ev("checkpoint", messages=CHECKPOINTED,
           clarify={"call_id": "call-1", "clarify_id": f"q-{run_id}"}),
        ev("clarify_request", clarify_id=f"q-{run_id}", question="Which?", choices=["a"]),
        WaitAnswer(f"q-{run_id}"), ev("done", final_text="never")]
    spare.default_script = lambda run_id: [ev("done", final_text="a it is")]
    run = await driver.start(session.id, "job")
    asked = await until(driver, run.run_id, lambda u: u.pause is not None)
    await home.stop()

    outcome = await other.answer(asked.pause.clarify_id, "a", "U2")  # a click on the other replica

    assert outcome.accepted
    done = await finished(driver, run.run_id)
    assert (done.status, done.state.final_text) == (MessageStatus.SUCCESS, "a it is")
    [resumed] = [r.body["resume"] for r in spare.requests_to("POST", "/run")]
    assert resumed["clarify"] == {"call_id": "call-1", "answer": "a"}
    assert resumed["messages"] == CHECKPOINTED
    assert (await ChatMessage.get(id=run.message_id)).bridge == spare.url
