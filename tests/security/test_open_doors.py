"""Issue #26 §3: with ADMIN_TOKEN set, nothing but /api/health answers without it (/metrics
and the OpenAPI document included); no page served loads anything from the internet; a
Bridge URL's `user:password` shows nowhere (health, metrics labels, log lines).

The app is composed as `hermes-chat serve` composes it (create_app, then the /metrics route
registered on it: hermes_chat/serve.py) and served over real HTTP."""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from litestar import Litestar

from admin.app import create_app
from admin.services import AdminServices
from core.agent.bridge.fleet import BridgeFleet
from core.config import Settings
from core.logs import OWN_PACKAGES, RedactingFormatter
from core.runtime.pool import RunPool
from hermes_chat.bridge_process import bridge_child
from hermes_chat.metrics import metrics_route
from tests.admin.conftest import AUTH, TOKEN
from tests.admin.server import serving
from tests.fakes.fake_bridge import FakeBridge
from tests.support.runtime import catalogue_for
from tests.fakes.changes import WAIT

DOORS = ["/metrics", "/schema", "/schema/openapi.json", "/schema/openapi.yaml",
         "/schema/swagger", "/schema/redoc", "/schema/elements", "/schema/rapidoc",
         "/schema/scalar"]
PAGES = ["/schema", "/schema/", "/schema/swagger", "/schema/redoc", "/schema/elements",
         "/schema/rapidoc", "/schema/stoplight", "/schema/scalar", "/schema/oauth2-redirect.html",
         "/schema/openapi.json", "/schema/openapi.yaml", "/api/health"]
PASSWORD = "s3cret-bridge-pass"


def as_served(pool: RunPool, settings: Settings) -> Litestar:
    app = create_app(settings, AdminServices(pool.bridge, pool.catalogue, pool))
    app.register(metrics_route(pool))
    return app


@pytest.fixture
async def served(fake_pool: RunPool) -> AsyncIterator[str]:
    async with serving(as_served(fake_pool, Settings(admin_token=TOKEN))) as url:
        yield url


@pytest.mark.parametrize("path", DOORS)
async def test_metrics_and_the_schema_need_the_token(db: str, served: str, path: str) -> None:
    async with httpx.AsyncClient(base_url=served, timeout=WAIT) as client:
        refused = await client.get(path)
        wrong = await client.get(path, headers={"Authorization": f"Bearer {TOKEN}x"})
        let_in = await client.get(path, headers=AUTH)
    for response in (refused, wrong):
        assert response.status_code == 401, (path, response.text)
        assert response.json()["code"] == "unauthorized"
        assert response.headers["www-authenticate"] == "Bearer"
    assert let_in.status_code != 401, path


async def test_the_schema_is_served_as_data_with_the_token(db: str, served: str) -> None:
    async with httpx.AsyncClient(base_url=served, headers=AUTH, timeout=WAIT) as client:
        root, document, yaml = [await client.get(p) for p in
                                ("/schema", "/schema/openapi.json", "/schema/openapi.yaml")]
        metrics = await client.get("/metrics")
    assert root.status_code == document.status_code == yaml.status_code == 200
    assert root.json()["openapi"].startswith("3.") and root.json() == document.json()
    assert "openapi:" in yaml.text
    assert metrics.status_code == 200 and "hermes_runs_active" in metrics.text


async def test_no_page_served_loads_anything_from_the_internet(db: str, served: str) -> None:
    """Every page answered (HTML or not) names no http(s) URL outside the service."""
    url = re.compile(r"""(?:https?:)?//[^\s"'<>)]+""")
    async with httpx.AsyncClient(base_url=served, headers=AUTH, timeout=WAIT) as client:
        for path in PAGES:
            response = await client.get(path)
            if "html" not in response.headers.get("content-type", ""):
                continue
            outside = [u for u in url.findall(response.text)
                       if not u.removeprefix("http:").startswith(served.removeprefix("http:"))]
            assert outside == [], (path, outside)


async def test_a_bridge_url_s_password_shows_nowhere(
    db: str, fake_bridge: FakeBridge, skills_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Two Bridges with `user:password@` (one down): health names each, metrics label each,
    the failure is logged, and the password is in none of them."""
    caplog.set_level(logging.INFO)
    async with FakeBridge() as gone:
        await gone.stop()
        urls = [u.replace("http://", f"http://hermes:{PASSWORD}@") for u in (fake_bridge.url, gone.url)]
        async with BridgeFleet.over_http(urls) as fleet:
            pool = RunPool(fleet, catalogue_for(None, skills_dir))
            async with serving(as_served(pool, Settings(admin_token=TOKEN))) as served, \
                    httpx.AsyncClient(base_url=served, timeout=WAIT) as client:
                health = await client.get("/api/health")
                metrics = await client.get("/metrics", headers=AUTH)
    assert health.status_code == 200 and health.json()["status"] == "degraded"
    assert set(health.json()["bridges"]) == {u.replace("http://", "http://***@") for u in
                                            (fake_bridge.url, gone.url)}
    assert f'bridge="http://***@{gone.url.removeprefix("http://")}"' in metrics.text
    # The service's own lines; a library's (httpx logs each request's URL at INFO) are quiet
    # at INFO and blanked by the log formatter: see the next test.
    ours = "\n".join(r.getMessage() for r in caplog.records if r.name.split(".")[0] in OWN_PACKAGES)
    assert "unreachable" in ours
    for shown in (health.text, metrics.text, ours):
        assert PASSWORD not in shown and "hermes:" not in shown


def test_a_bridge_url_s_password_is_blanked_from_every_log_line() -> None:
    """What any library writes with the URL (httpx: "HTTP Request: GET http://u:p@...")."""
    settings = Settings(hermes_bridge_url=f"http://a:{PASSWORD}@127.0.0.1:1, http://b:p%40ss-word2@h:2")
    formatter = RedactingFormatter(logging.Formatter("%(message)s"), settings.secrets())
    record = logging.LogRecord("httpx", logging.INFO, "", 0, "GET %s and %s", (
        f"http://a:{PASSWORD}@127.0.0.1:1/health", "http://b:p%40ss-word2@h:2"), None)
    assert formatter.format(record) == "GET http://a:[redacted]@127.0.0.1:1/health and http://b:[redacted]@h:2"


async def test_serve_names_an_external_bridge_without_its_password(
    skills_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "hermes_chat")
    settings = Settings(hermes_bridge_url=f"http://a:{PASSWORD}@127.0.0.1:1,http://b:{PASSWORD}@h:2")
    async with bridge_child(settings, catalogue_for(None, skills_dir)) as endpoint:
        assert endpoint.child is None
    assert "bridge: using the external one at http://***@127.0.0.1:1,http://***@h:2" in caplog.text
    assert PASSWORD not in caplog.text
