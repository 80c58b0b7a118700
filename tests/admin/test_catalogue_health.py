"""Catalogue routes and health (database and Bridge reachability, no token)."""

from __future__ import annotations

import httpx
import pytest

from admin import health
from admin.app import create_app
from admin.services import AdminServices
from core.agent.bridge.client import BridgeClient
from core.agent.bridge.fleet import BridgeFleet
from core.agent.catalogue import Catalogue
from core.config import Settings
from core.runtime.pool import RunPool
from tests.admin.server import serving
from tests.fakes.fake_bridge import FakeBridge


async def test_models_come_from_models_toml_without_key_variables(
    db: str, api: httpx.AsyncClient
) -> None:
    response = await api.get("/api/models")
    assert response.status_code == 200
    assert response.json() == [
        {"id": "fast", "name": "Fast model", "model": "gpt-4o-mini", "default": True},
        {"id": "deep", "name": "deep", "model": "o3", "default": False},
    ]


async def test_skills_are_the_folders_with_a_skill_md(db: str, api: httpx.AsyncClient) -> None:
    assert (await api.get("/api/skills")).json() == [
        {"folder": "code-review", "name": "Code review", "description": "Reviews a diff for bugs"}
    ]


async def test_health_reports_database_and_bridge(db: str, anonymous: httpx.AsyncClient) -> None:
    response = await anonymous.get("/api/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "bridge": "ok"}


async def test_health_with_the_bridge_down_is_degraded_but_up(
    db: str, anonymous: httpx.AsyncClient, bridge_down: FakeBridge
) -> None:
    response = await anonymous.get("/api/health")
    assert response.status_code == 200
    assert response.json() == {"status": "degraded", "database": "ok", "bridge": "unreachable"}


async def test_health_with_a_failing_bridge_is_degraded(
    db: str, anonymous: httpx.AsyncClient, fake_bridge: FakeBridge
) -> None:
    fake_bridge.fail("health", 500)
    assert (await anonymous.get("/api/health")).json()["bridge"] == "unreachable"


async def test_health_without_the_database_is_503(
    db: str, anonymous: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def unreachable() -> bool:
        raise ConnectionRefusedError("database down")

    monkeypatch.setattr(health, "ping", unreachable)  # the database as health reaches it
    response = await anonymous.get("/api/health")
    assert response.status_code == 503
    assert response.json() == {"status": "degraded", "database": "unreachable", "bridge": "ok"}


async def test_health_with_several_bridges_says_how_each_answers(
    db: str, catalogue: Catalogue, fake_bridge: FakeBridge
) -> None:
    async with FakeBridge() as gone:
        await gone.stop()  # configured, but nothing listens on its port
        fleet = BridgeFleet({fake_bridge.url: BridgeClient(fake_bridge.url),
                             gone.url: BridgeClient(gone.url)})
        runtime = RunPool(fleet, catalogue)
        app = create_app(Settings(), AdminServices(fleet, catalogue, runtime))
        async with fleet, serving(app) as url, httpx.AsyncClient(base_url=url) as client:
            response = await client.get("/api/health")
    assert response.status_code == 200
    body = response.json()
    assert (body["status"], body["bridge"]) == ("degraded", "ok"), "one Bridge up still works"
    assert body["bridges"][fake_bridge.url] == {"state": "ok", "reason": None}
    assert body["bridges"][gone.url]["state"] == "unreachable"
    assert "did not answer" in body["bridges"][gone.url]["reason"]
