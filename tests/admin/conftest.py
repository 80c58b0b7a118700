"""Fixtures of the admin API tests: a catalogue on disk, a fake Bridge, the real server."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from admin.app import create_app
from admin.services import AdminServices
from core.bridge_client import BridgeClient
from core.catalogue import Catalogue, load_catalogue
from core.config import Settings
from tests.admin.server import DEADLINE, serving
from tests.fakes.fake_bridge import FakeBridge

TOKEN = "admin-token-for-tests"
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
    async with FakeBridge() as running:
        yield running


@pytest.fixture(scope="session")
async def admin_url(catalogue: Catalogue, shared_bridge: FakeBridge) -> AsyncIterator[str]:
    """One admin API for the whole run (ADMIN_TOKEN set), talking to the fake Bridge."""
    async with BridgeClient(shared_bridge.url, call_timeout=5.0) as bridge:
        app = create_app(Settings(admin_token=TOKEN), AdminServices(bridge, catalogue))
        async with serving(app) as url:
            yield url


@pytest.fixture
def fake_bridge(shared_bridge: FakeBridge) -> FakeBridge:
    """The fake Bridge, with what earlier tests left in it forgotten."""
    for recorded in (shared_bridge.requests, shared_bridge.agents, shared_bridge.memory,
                     shared_bridge.runs, shared_bridge.scripts):
        recorded.clear()
    return shared_bridge


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
    async with httpx.AsyncClient(base_url=base_url, headers=AUTH, timeout=DEADLINE) as client:
        yield client


@pytest.fixture
async def anonymous(base_url: str) -> AsyncIterator[httpx.AsyncClient]:
    """A client without any token."""
    async with httpx.AsyncClient(base_url=base_url, timeout=DEADLINE) as client:
        yield client
