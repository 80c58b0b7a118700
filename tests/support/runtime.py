"""A RunPool per test, on the test database, against the real Bridge or the fault-injecting fake
(fixtures `pool` and `fake_pool`, a plugin of tests/conftest.py), and the helpers that open one."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from core.agent.bridge.client import BridgeClient
from core.agent.bridge.stream import StreamPolicy
from core.agent.catalogue import Catalogue, ModelEntry
from core.agent.prices import Price
from core.runtime.pool import RunPool
from core.usage.limits import SpendLimits
from tests.bridge.harness import RunningBridge
from tests.fakes.fake_bridge import FakeBridge
from tests.fakes.llm_server import ScriptedLLM

# A loopback connect is refused at once when nothing listens; it only times out when this
# process's loop is held up (a loaded CI machine): 1 s failed a run's start once under xdist.
FAST = StreamPolicy(read_timeout=2.0, connect_timeout=5.0, backoff_base=0.01, backoff_cap=0.05,
                    max_reconnects=4)


def catalogue_for(llm: ScriptedLLM | None, skills: Path, price: Price | None = None) -> Catalogue:
    """`llm` as the default model (at `price`, if it has one), and the skills of `skills`."""
    models = ()
    if llm is not None:
        models = (ModelEntry("scripted", "Scripted", llm.model, llm.base_url, None, True, price),)
    return Catalogue(models, skills)


@asynccontextmanager
async def opened_pool(url: str, catalogue: Catalogue, policy: StreamPolicy = FAST,
                      max_active_runs: int = 5, token: str | None = None,
                      limits: SpendLimits | None = None) -> AsyncIterator[RunPool]:
    """A RunPool on the Bridge at `url` (with its token, if it has one; with these spend
    `limits`), closed (log flushed) on exit."""
    async with BridgeClient(url, policy=policy, token=token) as client:
        runs = RunPool(client, catalogue, max_active_runs=max_active_runs, limits=limits)
        await runs.open()
        yield runs
        await runs.close()


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "skills" / "readme-gen"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: readme-gen\ndescription: Writes READMEs\n---\nWrite a README.", encoding="utf-8"
    )
    return tmp_path / "skills"


@pytest.fixture
async def pool(db: str, bridge: RunningBridge, llm: ScriptedLLM, skills_dir: Path
               ) -> AsyncIterator[RunPool]:
    """A pool on the real Bridge whose default model is this test's scripted LLM."""
    async with opened_pool(bridge.url, catalogue_for(llm, skills_dir)) as runs:
        yield runs


PRICE = Price(input=2.0, output=8.0)  # per million tokens: a scripted call costs $0.00028


@pytest.fixture
async def priced_pool(db: str, bridge: RunningBridge, llm: ScriptedLLM, skills_dir: Path
                      ) -> AsyncIterator[RunPool]:
    """`pool`, its default model priced at PRICE."""
    async with opened_pool(bridge.url, catalogue_for(llm, skills_dir, PRICE)) as runs:
        yield runs


@pytest.fixture
async def fake_bridge() -> AsyncIterator[FakeBridge]:
    async with FakeBridge(heartbeat=0.2) as fake:
        yield fake


@pytest.fixture
async def fake_pool(db: str, fake_bridge: FakeBridge, skills_dir: Path) -> AsyncIterator[RunPool]:
    """A pool on the fake Bridge, with a cap of two runs."""
    async with opened_pool(fake_bridge.url, catalogue_for(None, skills_dir), max_active_runs=2) as runs:
        yield runs
