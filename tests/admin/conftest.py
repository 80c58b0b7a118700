"""Fixtures of the admin API tests: a catalogue on disk, a fake Bridge, the real server.

The shared server (`api`) has a run pool that no test starts runs on; tests of runs serve the
app on the run pool fixtures of tests/support/runtime.py: `pool_api` (the real Bridge, a scripted
LLM) and `fake_pool_api` (the fault-injecting fake Bridge, a cap of two runs; here `fake_pool`
runs on this module's shared `fake_bridge`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest

from admin.app import create_app
from admin.services import AdminServices
from core.agent.bridge.client import BridgeClient
from core.agent.catalogue import Catalogue, load_catalogue
from core.config import Settings
from core.runtime.pool import RunPool
from tests.admin.server import serving
from tests.fakes.fake_bridge import FakeBridge, Item, ev
from tests.fakes.changes import WAIT

TOKEN = "admin-token-for-tests"
KEEPALIVE = 0.2  # seconds between SSE keep-alive comments of the run tests' servers
HEARTBEAT = 0.2  # the fake Bridge's: well inside the run pool's read timeout
AUTH = {"Authorization": f"Bearer {TOKEN}"}
MODELS_TOML = """
[[models]]
id = "fast"
name = "Fast model"
model = "gpt-4o-mini"
default = true

[[models]]
id = "deep"
model = "o3"
api_key_env = "DEEP_KEY"
"""
SKILL_MD = """---
name: Code review
description: Reviews a diff for bugs
---
Look for bugs first, style last.
"""


@pytest.fixture(scope="session")
def catalogue(tmp_path_factory: pytest.TempPathFactory) -> Catalogue:
    root = tmp_path_factory.mktemp("catalogue")
    (root / "models.toml").write_text(MODELS_TOML, encoding="utf-8")
    (root / "skills" / "code-review").mkdir(parents=True)
    (root / "skills" / "code-review" / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
    (root / "skills" / "not-a-skill").mkdir()
    return load_catalogue(str(root / "models.toml"), str(root / "skills"))


@pytest.fixture(scope="session")
async def shared_bridge() -> AsyncIterator[FakeBridge]:
    async with FakeBridge(heartbeat=HEARTBEAT) as running:
        yield running


@pytest.fixture(scope="session")
async def admin_url(
    migrated_database: str, catalogue: Catalogue, shared_bridge: FakeBridge
) -> AsyncIterator[str]:
    """One admin API for the whole run (ADMIN_TOKEN set), talking to the fake Bridge."""
    async with BridgeClient(shared_bridge.url, call_timeout=5.0) as bridge:
        runtime = RunPool(bridge, catalogue)
        await runtime.open()
        try:
            app = create_app(Settings(admin_token=TOKEN), AdminServices(bridge, catalogue, runtime))
            async with serving(app) as url:
                yield url
        finally:
            await runtime.close()


@pytest.fixture
def fake_bridge(shared_bridge: FakeBridge) -> FakeBridge:
    """The fake Bridge, with what earlier tests left in it forgotten."""
    for recorded in (shared_bridge.requests, shared_bridge.agents, shared_bridge.memory,
                     shared_bridge.runs, shared_bridge.scripts, shared_bridge.released):
        recorded.clear()
    shared_bridge.default_script = _done
    return shared_bridge


def _done(run_id: str) -> list[Item]:
    return [ev("done", final_text=f"done {run_id}")]  # the fake's own default


@pytest.fixture
async def bridge_down(fake_bridge: FakeBridge) -> AsyncIterator[FakeBridge]:
    """The fake Bridge stopped for this test (its port refuses connections), then restarted."""
    await fake_bridge.stop()
    try:
        yield fake_bridge
    finally:
        await fake_bridge.start()


@pytest.fixture
def base_url(db: str, admin_url: str, fake_bridge: FakeBridge) -> str:
    """The admin API, on empty tables (and so on both database backends)."""
    return admin_url


@pytest.fixture
async def api(base_url: str) -> AsyncIterator[httpx.AsyncClient]:
    """A client that sends the admin token."""
    async with httpx.AsyncClient(base_url=base_url, headers=AUTH, timeout=WAIT) as client:
        yield client


@pytest.fixture
async def anonymous(base_url: str) -> AsyncIterator[httpx.AsyncClient]:
    """A client without any token."""
    async with httpx.AsyncClient(base_url=base_url, timeout=WAIT) as client:
        yield client


@asynccontextmanager
async def admin_on(runtime: RunPool, keepalive: float = KEEPALIVE) -> AsyncIterator[str]:
    """The admin API served on this run pool (and its Bridge and catalogue); yields its URL."""
    services = AdminServices(runtime.bridge, runtime.catalogue, runtime, keepalive=keepalive)
    async with serving(create_app(Settings(admin_token=TOKEN), services)) as url:
        yield url


@pytest.fixture
async def pool_url(pool: RunPool) -> AsyncIterator[str]:
    async with admin_on(pool) as url:
        yield url


@pytest.fixture
async def fake_pool_url(fake_pool: RunPool) -> AsyncIterator[str]:
    async with admin_on(fake_pool) as url:
        yield url


@pytest.fixture
async def pool_api(pool_url: str) -> AsyncIterator[httpx.AsyncClient]:
    """The admin API on `pool`: runs go to the real Bridge and the scripted LLM `llm`."""
    async with httpx.AsyncClient(base_url=pool_url, headers=AUTH, timeout=WAIT) as client:
        yield client


@pytest.fixture
async def fake_pool_api(fake_pool_url: str) -> AsyncIterator[httpx.AsyncClient]:
    """The admin API on `fake_pool`: runs play `fake_bridge` scripts, two at a time at most."""
    async with httpx.AsyncClient(base_url=fake_pool_url, headers=AUTH, timeout=WAIT) as client:
        yield client
