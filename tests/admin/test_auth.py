"""Bearer-token guard: every route but health needs `Authorization: Bearer $ADMIN_TOKEN`."""

from __future__ import annotations

import httpx
import pytest

from admin.app import create_app
from admin.services import AdminServices
from core.agent.bridge.client import BridgeClient
from core.agent.catalogue import Catalogue
from core.config import Settings
from core.errors import InvalidInput
from core.runtime.pool import RunPool
from hermes_chat.serve import _check_admin_binding
from tests.admin.conftest import TOKEN
from tests.admin.server import serving
from tests.fakes.fake_bridge import FakeBridge

GUARDED = [
    ("GET", "/api/chat/sessions"),
    ("POST", "/api/chat/sessions"),
    ("GET", "/api/chat/sessions/1"),
    ("PATCH", "/api/chat/sessions/1"),
    ("DELETE", "/api/chat/sessions/1"),
    ("POST", "/api/chat/sessions/1/reset"),
    ("GET", "/api/chat/sessions/1/export"),
    ("GET", "/api/chat/sessions/1/messages"),
    ("GET", "/api/chat/sessions/1/memory"),
    ("PATCH", "/api/chat/messages/1"),
    ("GET", "/api/chat/messages/1/versions"),
    ("POST", "/api/chat/messages/1/activate"),
    ("POST", "/api/chat/messages/1/regenerate"),
    ("POST", "/api/chat/sessions/1/runs"),
    ("GET", "/api/chat/runs"),
    ("GET", "/api/chat/runs/r1/stream"),
    ("GET", "/api/chat/runs/r1/state"),
    ("POST", "/api/chat/runs/r1/resume"),
    ("POST", "/api/chat/runs/r1/stop"),
    ("GET", "/api/models"),
    ("GET", "/api/skills"),
]
WRONG = [
    {},
    {"Authorization": "Bearer not-the-token"},
    {"Authorization": f"Bearer {TOKEN}x"},
    {"Authorization": f"Basic {TOKEN}"},
    {"Authorization": TOKEN},
    {"Authorization": "Bearer"},
]


@pytest.mark.parametrize(("method", "path"), GUARDED)
async def test_every_route_but_health_refuses_a_missing_token(
    anonymous: httpx.AsyncClient, method: str, path: str
) -> None:
    # A body that would be invalid proves the guard answers before anything is parsed.
    response = await anonymous.request(method, path, content=b"{not json")
    assert response.status_code == 401
    body = response.json()
    assert body["code"] == "unauthorized" and "Bearer" in body["message"]
    assert response.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize("headers", WRONG)
async def test_wrong_tokens_are_refused(anonymous: httpx.AsyncClient, headers: dict[str, str]) -> None:
    response = await anonymous.get("/api/chat/sessions", headers=headers)
    assert (response.status_code, response.json()["code"]) == (401, "unauthorized")


async def test_the_right_token_passes_whatever_the_scheme_case(anonymous: httpx.AsyncClient) -> None:
    for scheme in ("Bearer", "bearer", "BEARER"):
        response = await anonymous.get(
            "/api/chat/sessions", headers={"Authorization": f"{scheme} {TOKEN}"}
        )
        assert response.status_code == 200


async def test_health_alone_needs_no_token(anonymous: httpx.AsyncClient) -> None:
    assert (await anonymous.get("/api/health")).status_code == 200
    assert (await anonymous.get("/schema/openapi.json")).status_code == 401


async def test_without_an_admin_token_the_api_is_open(
    db: str, catalogue: Catalogue, fake_bridge: FakeBridge
) -> None:
    # serve refuses to bind anything but loopback then (tests/hermes_chat/test_serve.py).
    async with BridgeClient(fake_bridge.url) as bridge:
        app = create_app(Settings(), AdminServices(bridge, catalogue, RunPool(bridge, catalogue)))
        async with serving(app) as url, httpx.AsyncClient(base_url=url) as client:
            assert (await client.get("/api/chat/sessions")).status_code == 200
            response = await client.post("/api/chat/sessions", json={"title": "open"})
            assert response.status_code == 201


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_without_a_token_serve_may_bind_loopback(host: str) -> None:
    _check_admin_binding(Settings(admin_host=host))


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.0.0.5", "192.168.1.20", "admin.example"])
def test_without_a_token_serve_refuses_any_other_address_and_says_why(host: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        _check_admin_binding(Settings(admin_host=host))
    assert "ADMIN_TOKEN is unset" in refused.value.message
    assert f"ADMIN_HOST={host} refused" in refused.value.message


def test_with_a_token_serve_may_bind_any_address() -> None:
    _check_admin_binding(Settings(admin_token=TOKEN, admin_host="0.0.0.0"))
