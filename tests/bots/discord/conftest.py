"""Fixtures of the Discord adapter's tests: a FakeDiscord per test, the run pools of
tests/core/runtime (real Bridge + scripted LLM, or the fault-injecting fake Bridge)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from core.bridge.client import BridgeClient
from core.catalogue import Catalogue, ModelEntry
from core.runtime.pool import RunPool
from tests.bots.discord.harness import SPEED, refused_acknowledgements
from tests.core.runtime.conftest import FAST, fake_bridge, pool, skills_dir  # noqa: F401
from tests.fakes.discordfake import FakeDiscord, Limits
from tests.fakes.fake_bridge import FakeBridge

MODELS = (ModelEntry("fast", "Fast", "small-model"), ModelEntry("smart", "Smart", "big-model"))


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    """A Discord whose rate-limit windows pass SPEED times faster (the bot's budget too, see
    `harness.running_bot`), so conversations are not paced by 5-second windows. On exit:
    no 429, and no interaction callback refused (late, or a second one)."""
    limits = Limits(message_window=5.0 / SPEED, webhook_window=2.0 / SPEED)
    async with FakeDiscord(limits=limits) as server, server.patch_discord():
        yield server
        assert server.rate_limited == [], "the bot's own budget must keep it clear of 429s"
        assert refused_acknowledgements(server) == [], "each interaction acknowledged in time, once"


@pytest.fixture
async def fake_runs(db: str, fake_bridge: FakeBridge, skills_dir: Path  # noqa: F811
                    ) -> AsyncIterator[RunPool]:
    """A pool on the scripted fake Bridge (cap 5) with two models and one skill."""
    async with BridgeClient(fake_bridge.url, policy=FAST) as client:
        runs = RunPool(client, Catalogue(MODELS, skills_dir), max_active_runs=5)
        await runs.open()
        yield runs
        await runs.close()


@pytest.fixture(autouse=True)
async def no_leaked_tasks() -> AsyncIterator[None]:
    before = asyncio.all_tasks()
    yield
    leaked = {t for t in asyncio.all_tasks() - before if t is not asyncio.current_task()}
    if leaked:
        await asyncio.wait(leaked, timeout=2.0)
    names = [f"{t.get_name()} {t.get_coro()!r}" for t in leaked if not t.done()]
    assert not names, f"tasks left running: {names}"
