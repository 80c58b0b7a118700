"""One table of conversation scenarios, run against Slack and Discord through their fakes.

Both platforms share one run pool on the scripted fake Bridge (two models, one skill, a cap
of one run), and a second pool on the same database and Bridge that stands for another
replica. `chat` is the platform's driver, parametrized by platform (Slack twice: streamed
turns, and the edit-based live message of a workspace without streams).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from core.agent.bridge.client import BridgeClient
from core.agent.catalogue import Catalogue
from core.runtime.pool import RunPool
from tests.bots.contract.drivers import Chat, talking
from tests.fakes.fake_bridge import FakeBridge
from tests.support.discord import MODELS
from tests.support.runtime import FAST


@pytest.fixture(autouse=True)
def every_task_ends(no_leaked_tasks: None) -> None:
    """Each scenario leaves no task running, as each Discord test does."""


async def _pool(fake_bridge: FakeBridge, skills_dir: Path, cap: int) -> RunPool:
    runs = RunPool(BridgeClient(fake_bridge.url, policy=FAST), Catalogue(MODELS, skills_dir),
                   max_active_runs=cap)
    await runs.open()
    return runs


@pytest.fixture
async def runs(db: str, fake_bridge: FakeBridge, skills_dir: Path) -> AsyncIterator[RunPool]:
    """The pool the bot under test drives runs on."""
    runs = await _pool(fake_bridge, skills_dir, cap=1)
    yield runs
    await runs.close()
    await runs.bridge.aclose()


@pytest.fixture
async def other_replica(db: str, fake_bridge: FakeBridge, skills_dir: Path
                        ) -> AsyncIterator[RunPool]:
    """Another replica's pool: its runs are in the database and on the Bridge, not in `runs`."""
    runs = await _pool(fake_bridge, skills_dir, cap=5)
    yield runs
    await runs.close()
    await runs.bridge.aclose()


@pytest.fixture(params=["slack", "slack-edited", "discord"])
def platform(request: pytest.FixtureRequest) -> tuple[str, Any]:
    """The platform's fake (its fixture is set up outside the event loop, so here)."""
    if request.param.startswith("slack"):
        return request.param, (request.getfixturevalue("fake_slack"),
                               request.getfixturevalue("fast_clock"))
    return "discord", request.getfixturevalue("fake")


@pytest.fixture
async def chat(platform: tuple[str, Any], runs: RunPool) -> AsyncIterator[Chat]:
    """The bot of the platform on `runs`, and a driver that talks to it as its users do."""
    async with talking(platform, runs) as driver:
        yield driver
