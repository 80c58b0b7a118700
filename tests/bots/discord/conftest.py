"""Fixtures of the Discord adapter's tests: the run pools of tests/support/runtime.py (real
Bridge + scripted LLM, or the fault-injecting fake Bridge) and two of their own; the FakeDiscord
`fake` is tests/support/discord.py's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from core.agent.bridge.client import BridgeClient
from core.agent.catalogue import Catalogue
from core.runtime.pool import RunPool
from tests.bridge.harness import RunningBridge
from tests.fakes.fake_bridge import FakeBridge
from tests.fakes.llm_server import ScriptedLLM
from tests.support.discord import MODELS
from tests.support.runtime import FAST, catalogue_for


@pytest.fixture(autouse=True)
def every_task_ends(no_leaked_tasks: None) -> None:
    """Each test here leaves no task running (tests/support/discord.py's `no_leaked_tasks`)."""


@pytest.fixture
async def fake_runs(db: str, fake_bridge: FakeBridge, skills_dir: Path
                    ) -> AsyncIterator[RunPool]:
    """A pool on the scripted fake Bridge (cap 5) with two models and one skill."""
    async with BridgeClient(fake_bridge.url, policy=FAST) as client:
        runs = RunPool(client, Catalogue(MODELS, skills_dir), max_active_runs=5)
        await runs.open()
        yield runs
        await runs.close()


@pytest.fixture
async def second_pool(db: str, bridge: RunningBridge, llm: ScriptedLLM, skills_dir: Path
                      ) -> AsyncIterator[RunPool]:
    """Another RunPool on the same database and Bridge: the process after a restart."""
    async with BridgeClient(bridge.url, policy=FAST) as client:
        runs = RunPool(client, catalogue_for(llm, skills_dir))
        await runs.open()
        yield runs
        await runs.close()
