"""Catalogue routes and health (database and Bridge reachability, no token)."""

from __future__ import annotations

import httpx
import pytest

from core import db as database
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

    monkeypatch.setattr(database, "ping", unreachable)
    response = await anonymous.get("/api/health")
    assert response.status_code == 503
    assert response.json() == {"status": "degraded", "database": "unreachable", "bridge": "ok"}
