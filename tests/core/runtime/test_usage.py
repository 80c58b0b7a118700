"""Each model call of a run recorded once (docs/architecture.md#usage-and-spend-limits): through
the real Bridge, against who asked and where; once across a process that dies before its log
rows are stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.agent.bridge.client import BridgeClient
from core.agent.catalogue import Catalogue, ModelEntry
from core.agent.prices import Price
from core.chat import sessions
from core.runtime.log_buffer import LogBuffer
from core.runtime.pool import RunPool
from core.runtime.recovery import recover
from core.store.models import Platform, UsageCall, UsageDay
from tests.core.runtime.waiting import finished
from tests.fakes.changes import CHANGES
from tests.fakes.fake_bridge import FakeBridge, Stall, ev
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply
from tests.bridge.harness import RunningBridge
from tests.support.runtime import FAST, catalogue_for, opened_pool

TODO = {"todos": [{"id": "1", "content": "add up", "status": "in_progress"}]}
SLACK = sessions.ThreadKey(Platform.SLACK, "T1", "C1", "1700000000.000100")


async def test_each_model_call_is_stored_once_with_its_model_and_who_asked(
    pool: RunPool, llm: ScriptedLLM
) -> None:
    llm.script(tool_reply(ToolCall("todo", TODO)), text_reply("Added up."))
    session, _ = await sessions.session_for_thread(SLACK)

    done = await finished(pool, (await pool.start(session.id, "add up", author="U1")).run_id)

    calls = await UsageCall.filter(message_id=done.message_id).order_by("seq")
    assert [(c.prompt_tokens, c.completion_tokens, c.cached_tokens) for c in calls] == [
        (100, 10, 0), (100, 10, 0)]
    assert {(c.platform, c.workspace, c.channel, c.user, c.model, c.run_id, c.session_id)
            for c in calls} == {("slack", "T1", "C1", "U1", llm.model, done.run_id, session.id)}
    assert len({c.seq for c in calls}) == 2
    [day] = await UsageDay.filter(dimension="user")
    assert (day.calls, day.prompt_tokens, day.completion_tokens) == (2, 200, 20)
    assert (done.state.usage.calls, done.state.usage.tokens) == (2, 220)


async def test_an_operators_run_counts_against_the_operator(pool: RunPool, llm: ScriptedLLM
                                                            ) -> None:
    llm.script(text_reply("Hello."))
    session = await sessions.create_session()

    await finished(pool, (await pool.start(session.id, "hi")).run_id)

    [call] = await UsageCall.all()
    assert (call.platform, call.workspace, call.channel, call.user) == ("api", "", "", "admin")


class NeverStored(LogBuffer):
    """A process that dies before its log rows reach the database."""

    async def flush(self) -> None:
        return None


async def test_a_call_replayed_to_the_next_process_is_counted_once(
    db: str, fake_bridge: FakeBridge, skills_dir: Path
) -> None:
    usage = ev("usage", model="m", prompt_tokens=100, completion_tokens=10, cached_tokens=0)
    fake_bridge.default_script = lambda run_id: [usage, Stall("hold"), ev("text", text="x"),
                                                 usage, ev("done", final_text="ok")]
    catalogue = catalogue_for(None, skills_dir)
    async with BridgeClient(fake_bridge.url, policy=FAST) as client:
        dying = RunPool(client, catalogue, buffer=NeverStored())
        await dying.open()
        session = (await sessions.create_session()).id
        run = await dying.start(session, "go", author="U1")
        await CHANGES.until(lambda: UsageCall.exists(), 10)
        await dying.close()  # its leases handed back, its log rows never stored

        later = RunPool(client, catalogue)
        await later.open()
        try:
            await recover(later)  # follows the run from seq 0: the Bridge replays the call
            fake_bridge.release("hold")
            done = await finished(later, run.run_id)
        finally:
            await later.close()
    assert [c.seq for c in await UsageCall.all().order_by("seq")] == [1, 3]
    [day] = await UsageDay.filter(dimension="user")
    assert (day.calls, day.prompt_tokens) == (2, 200)
    assert done.state.usage.calls == 2


def priced(llm: ScriptedLLM, skills: Path, price: Price | None) -> Catalogue:
    return Catalogue((ModelEntry("scripted", "Scripted", llm.model, llm.base_url, None, True,
                                 price),), skills)


async def test_a_call_keeps_the_cost_of_its_day_when_the_price_changes(
    db: str, bridge: RunningBridge, llm: ScriptedLLM, skills_dir: Path
) -> None:
    llm.script(text_reply("Cheap.", cached_tokens=40), text_reply("Dear."), text_reply("Free."))
    session = (await sessions.create_session()).id
    first = Price(input=1.0, output=4.0, cached=0.25)
    async with opened_pool(bridge.url, priced(llm, skills_dir, first)) as runs:
        cheap = await finished(runs, (await runs.start(session, "one")).run_id)
    async with opened_pool(bridge.url, priced(llm, skills_dir, Price(10.0, 40.0))) as runs:
        dear = await finished(runs, (await runs.start(session, "two")).run_id)
    async with opened_pool(bridge.url, priced(llm, skills_dir, None)) as runs:
        free = await finished(runs, (await runs.start(session, "three")).run_id)

    costs = {c.message_id: c.cost for c in await UsageCall.all()}
    assert costs[cheap.message_id] == pytest.approx((60 * 1.0 + 40 * 0.25 + 10 * 4.0) / 1e6)
    assert costs[dear.message_id] == pytest.approx((100 * 10.0 + 10 * 40.0) / 1e6)
    assert costs[free.message_id] is None  # a model without prices: tokens only
    assert cheap.state.usage.cost == costs[cheap.message_id]
    assert free.state.usage.cost is None
    [day] = await UsageDay.filter(dimension="user")
    assert (day.calls, day.priced_calls) == (3, 2)
    assert day.cost == pytest.approx(costs[cheap.message_id] + costs[dear.message_id])
