"""Requirement (issue #8 §5): "admin token required and compared in constant time".

Every route of the admin app but /api/health needs
`Authorization: Bearer $ADMIN_TOKEN`. The routes are read from the app's own OpenAPI document,
so a route added later is covered without touching this file. tests/admin/test_auth.py keeps
its hand-written list (and the scheme-case and no-token cases); this file adds the iteration,
the wrong-token matrix on every route and the constant-time comparison."""

from __future__ import annotations

import hmac
import re
from collections.abc import AsyncIterator

import httpx
import pytest
from litestar import Litestar
from litestar.routes import HTTPRoute

import core.edge.access
from admin.app import create_app
from admin.services import AdminServices
from core.config import Settings
from core.runtime.pool import RunPool
from tests.admin.conftest import AUTH, TOKEN
from tests.admin.server import serving
from tests.fakes.changes import WAIT

OPEN = {"/api/health"}
HTTP_METHODS = {"get", "post", "put", "patch", "delete"}
WRONG = [
    {},
    {"Authorization": ""},
    {"Authorization": "Bearer"},
    {"Authorization": f"Bearer {TOKEN[:-1]}"},
    {"Authorization": f"Bearer {TOKEN}x"},
    {"Authorization": f"Bearer {TOKEN[:-1]}X"},
    {"Authorization": f"Basic {TOKEN}"},
    {"Authorization": f"Token {TOKEN}"},
    {"Authorization": TOKEN},
]


@pytest.fixture
def app(fake_pool: RunPool) -> Litestar:
    services = AdminServices(fake_pool.bridge, fake_pool.catalogue, fake_pool)
    return create_app(Settings(admin_token=TOKEN), services)


@pytest.fixture
async def client(app: Litestar) -> AsyncIterator[httpx.AsyncClient]:
    async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=WAIT) as http:
        yield http


async def _operations(client: httpx.AsyncClient) -> list[tuple[str, str]]:
    """(method, path) of every operation the app documents, path parameters filled in."""
    document = (await client.get("/schema/openapi.json", headers=AUTH)).json()
    return [(method.upper(), re.sub(r"\{[^}]+\}", "1", path))
            for path, item in document["paths"].items()
            for method in item if method in HTTP_METHODS]


async def test_every_documented_route_but_health_requires_the_token(
    db: str, client: httpx.AsyncClient
) -> None:
    operations = await _operations(client)
    assert len(operations) >= 20  # the document was read, not an empty list
    for method, path in operations:
        for headers in WRONG:
            response = await client.request(method, path, headers=headers, content=b"{not json")
            if path in OPEN:
                assert response.status_code == 200, (method, path)
                continue
            assert response.status_code == 401, (method, path, headers, response.text)
            assert response.headers["content-type"].startswith("application/json")
            assert response.json()["code"] == "unauthorized", (method, path)
            assert response.headers["www-authenticate"] == "Bearer"


async def test_no_route_is_left_out_of_the_document(app: Litestar, client: httpx.AsyncClient) -> None:
    """The iteration above sees every served route: none hides with include_in_schema=False."""
    documented = {path for _, path in await _operations(client)}
    served = {re.sub(r"\{[^}]+\}", "1", route.path_format) for route in app.routes
              if isinstance(route, HTTPRoute) and not route.path.startswith("/schema")}
    assert served <= documented, served - documented


async def test_the_token_is_compared_with_hmac_compare_digest_on_bytes(
    db: str, client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every Bearer token, whatever its length, reaches compare_digest (no early `==` or length
    check leaks how much matched), as bytes on both sides, against the configured token."""
    calls: list[tuple[object, object, bool]] = []
    real = hmac.compare_digest

    def spy(given: object, expected: object) -> bool:
        result = real(given, expected)  # type: ignore[arg-type]
        calls.append((given, expected, result))
        return result

    monkeypatch.setattr(core.edge.access.hmac, "compare_digest", spy)
    tries = ["x", TOKEN[:-1], TOKEN[:-1] + "X", TOKEN + "x", "y" * 200, TOKEN]
    for given in tries:
        response = await client.get("/api/chat/sessions",
                                    headers={"Authorization": f"Bearer {given}"})
        assert response.status_code == (200 if given == TOKEN else 401)
    assert [c[0] for c in calls] == [t.encode() for t in tries]
    assert all(isinstance(g, bytes) and e == TOKEN.encode() for g, e, _ in calls)
    assert [r for _, _, r in calls] == [False] * (len(tries) - 1) + [True]
