"""/metrics reads the runtime's counters in the Prometheus text format."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest

from core.agent.bridge.client import BridgeClient
from core.agent.bridge.fleet import BridgeFleet
from core.agent.events import Usage
from core.chat import sessions
from core.edge.platform_links import PlatformLinks
from core.runtime.pool import RunPool
from hermes_chat.metrics import BridgeFleetCollector, PlatformLinkCollector, RuntimeCollector
from tests.core.runtime.waiting import finished, until
from tests.fakes.fake_bridge import FakeBridge, Stall, ev
from tests.support.runtime import FAST, catalogue_for


async def test_the_figures_follow_the_runs(fake_pool: RunPool, fake_bridge: FakeBridge) -> None:
    registry = CollectorRegistry()
    registry.register(RuntimeCollector(fake_pool))
    fake_bridge.default_script = lambda run_id: [ev("text", text="a"), Stall(run_id),
                                                 ev("done", final_text="a")]
    runs = [await fake_pool.start((await sessions.create_session()).id, "x") for _ in range(3)]
    await until(fake_pool, runs[0].run_id, lambda u: u.state.last_seq == 1)
    fake_pool.metrics.platform_call("slack", "chat.update")
    fake_pool.metrics.platform_call("slack", "chat.update", rate_limited=True)
    text = generate_latest(registry).decode()
    assert "hermes_runs_active 2.0" in text and "hermes_runs_queued 1.0" in text
    assert 'hermes_platform_calls_total{method="chat.update",platform="slack"} 2.0' in text
    assert 'hermes_platform_rate_limited_total{platform="slack"} 1.0' in text
    for run in runs:
        fake_bridge.release(run.run_id)
    for run in runs:
        await finished(fake_pool, run.run_id)
    text = generate_latest(registry).decode()
    assert "hermes_runs_active 0.0" in text and "hermes_events_total 6.0" in text


def test_each_configured_platform_has_its_connection_reconnects_and_drops() -> None:
    links = PlatformLinks()
    discord, slack = links.add("discord"), links.add("slack")
    for _ in range(2):
        discord.connected()
        discord.lost("disconnected (close code 1006)")
    discord.connected()
    discord.dropped_event()
    registry = CollectorRegistry()
    registry.register(PlatformLinkCollector(links))
    text = generate_latest(registry).decode()
    assert 'hermes_platform_connected{platform="discord"} 1.0' in text
    assert 'hermes_platform_connected{platform="slack"} 0.0' in text
    assert 'hermes_platform_reconnects_total{platform="discord"} 2.0' in text
    assert 'hermes_platform_reconnects_total{platform="slack"} 0.0' in text
    assert 'hermes_platform_dropped_events_total{platform="discord"} 1.0' in text
    slack.stopped("Slack refused SLACK_APP_TOKEN (invalid_auth)")
    assert 'hermes_platform_connected{platform="slack"} 0.0' in generate_latest(registry).decode()


async def test_each_bridge_of_several_shows_whether_it_answers_and_the_runs_it_holds(
    db: str, fake_bridge: FakeBridge, skills_dir: Path
) -> None:
    async with FakeBridge() as gone:
        await gone.stop()
        fleet = BridgeFleet({fake_bridge.url: BridgeClient(fake_bridge.url, policy=FAST),
                             gone.url: BridgeClient(gone.url, policy=FAST)})
        async with fleet:
            pool = RunPool(fleet, catalogue_for(None, skills_dir))
            await pool.open()
            try:
                fake_bridge.default_script = lambda run_id: [ev("text", text="a"), Stall(run_id)]
                session = await sessions.create_session()
                run = await pool.start(session.id, "x")  # placed on `gone` or not: it runs here
                await until(pool, run.run_id, lambda u: u.state.last_seq == 1)
                collector = BridgeFleetCollector(fleet, pool)
                registry = CollectorRegistry()
                registry.register(collector)
                await collector.refresh()
                text = generate_latest(registry).decode()
            finally:
                await pool.close()
    assert f'hermes_bridge_answering{{bridge="{fake_bridge.url}"}} 1.0' in text
    assert f'hermes_bridge_answering{{bridge="{gone.url}"}} 0.0' in text
    assert f'hermes_bridge_runs{{bridge="{fake_bridge.url}"}} 1.0' in text
    assert f'hermes_bridge_runs{{bridge="{gone.url}"}} 0.0' in text


async def test_tokens_and_cost_count_each_recorded_call_by_model(
    fake_pool: RunPool, fake_bridge: FakeBridge
) -> None:
    registry = CollectorRegistry()
    registry.register(RuntimeCollector(fake_pool))
    call = {"model": "m-1", "prompt_tokens": 100, "completion_tokens": 10, "cached_tokens": 40}
    fake_bridge.default_script = lambda run_id: [ev("usage", **call), ev("usage", **call),
                                                 ev("done", final_text="a")]
    await finished(fake_pool, (await fake_pool.start((await sessions.create_session()).id, "x")).run_id)
    text = generate_latest(registry).decode()
    assert 'hermes_tokens_total{kind="prompt",model="m-1"} 200.0' in text
    assert 'hermes_tokens_total{kind="completion",model="m-1"} 20.0' in text
    assert 'hermes_tokens_total{kind="cached",model="m-1"} 80.0' in text
    assert 'hermes_cost_total{model="m-1"}' not in text  # no price in the catalogue: no cost
    priced = Usage(seq=1, at=datetime.now(UTC), model="m-2", prompt_tokens=1, cost=0.25)
    fake_pool.metrics.spent(priced)
    assert 'hermes_cost_total{model="m-2"} 0.25' in generate_latest(registry).decode()
