"""Fixtures of the console tests: the app `serve` builds (admin API + console) served for real on
a run pool, an HTTP client that signs in like a browser, and a real headless Chromium.

Chromium is Debian's (/usr/bin/chromium, which scripts/test installs), driven by Playwright:
Playwright's own browser download is never used. Every request a page makes that would leave
127.0.0.1 is refused and fails the test; each page a test visits is kept as a screenshot in
TEST_OUTPUT_DIR (default `test-output/`) under `console/`.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.async_api import Browser, BrowserContext, Page, Playwright, async_playwright, expect

from admin.app import create_app
from admin.services import AdminServices
from console.plugin import ConsolePlugin
from core.config import Settings
from core.runtime.pool import RunPool
from tests.admin.server import serving
from tests.fakes.changes import WAIT

TOKEN = "console-token-for-tests"
KEEPALIVE = 0.2
CHROMIUM = os.environ.get("HERMES_TEST_CHROMIUM", "/usr/bin/chromium")
# The flags of a browser on a machine with no network: nothing in the background, no QUIC.
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--disable-dev-shm-usage"]
ROOT = Path(__file__).parents[2]
SHOTS = Path(os.environ.get("TEST_OUTPUT_DIR", ROOT / "test-output")) / "console"
LOCAL_HOSTS = {"127.0.0.1"}
expect.set_options(timeout=WAIT * 1000)  # a loaded machine: the same deadline as every wait


@asynccontextmanager
async def console_on(runtime: RunPool, token: str | None = TOKEN) -> AsyncIterator[str]:
    """The app `serve` builds (the admin API with the console) on this run pool; its URL."""
    services = AdminServices(runtime.bridge, runtime.catalogue, runtime, keepalive=KEEPALIVE)
    app = create_app(Settings(admin_token=token), services, plugins=[ConsolePlugin(token)])
    async with serving(app) as url:
        yield url


@pytest.fixture
async def console_url(pool: RunPool) -> AsyncIterator[str]:
    """The console on `pool`: runs go to the real Bridge and this test's scripted LLM."""
    async with console_on(pool) as url:
        yield url


@pytest.fixture
async def fake_console_url(fake_pool: RunPool) -> AsyncIterator[str]:
    """The console on `fake_pool` (the fault-injecting fake Bridge)."""
    async with console_on(fake_pool) as url:
        yield url


@asynccontextmanager
async def signed_in_client(url: str, token: str = TOKEN) -> AsyncIterator[httpx.AsyncClient]:
    """A client holding a console session, as a browser has after signing in."""
    async with httpx.AsyncClient(base_url=url, timeout=WAIT) as client:
        response = await client.post("/console/sign-in", data={"token": token})
        assert response.status_code == 303, response.text
        yield client


def csrf_of(html: str) -> str:
    """The CSRF token a page's forms carry."""
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', html)
    assert found, "no form with a CSRF token on the page"
    return found.group(1)


# -- the browser ---------------------------------------------------------------------------


@pytest.fixture(scope="session")
async def playwright() -> AsyncIterator[Playwright]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: ./scripts/test installs Debian's chromium "
                    "(or: apt-get install chromium)")
    async with async_playwright() as running:
        yield running


@pytest.fixture(scope="session")
async def browser(playwright: Playwright) -> AsyncIterator[Browser]:
    """One headless Chromium per test process (each test has its own context: no cookies
    shared); Playwright gives it a new, empty profile folder."""
    launched = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                                args=CHROMIUM_FLAGS)
    yield launched
    await launched.close()


@dataclass
class Visits:
    """What the pages of one test asked for: every URL, and those refused (not 127.0.0.1)."""

    urls: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)


@pytest.fixture
async def context(browser: Browser, request: pytest.FixtureRequest) -> AsyncIterator[BrowserContext]:
    """A fresh browser context; any request to a host but 127.0.0.1 is aborted and fails the
    test, as does an error the page's scripts report (a CSP violation among them)."""
    visits = Visits()
    context = await browser.new_context(viewport={"width": 1280, "height": 900},
                                        accept_downloads=True)
    context.set_default_timeout(WAIT * 1000)

    async def guard(route, req) -> None:  # type: ignore[no-untyped-def]
        visits.urls.append(req.url)
        if urlsplit(req.url).hostname in LOCAL_HOSTS:
            await route.continue_()
        else:
            visits.refused.append(req.url)
            await route.abort()

    await context.route("**/*", guard)
    def watch(page: Page) -> None:
        page.on("pageerror", lambda error: visits.console_errors.append(str(error)))
        # A refused policy or a failing script says so in the console; an answer's status
        # (a 401 of a wrong token) is the tests' to check, not an error of the page.
        page.on("console", lambda m: visits.console_errors.append(m.text) if m.type == "error"
                and not m.text.startswith("Failed to load resource") else None)

    context.on("page", watch)
    context.visits = visits  # type: ignore[attr-defined]
    yield context
    await context.close()
    assert visits.refused == [], f"requests that would have left the machine: {visits.refused}"
    assert visits.console_errors == [], f"errors in the page: {visits.console_errors}"


@pytest.fixture
async def page(context: BrowserContext) -> Page:
    return await context.new_page()


@pytest.fixture(scope="session")
def shots() -> Path:
    """Where this run keeps its screenshots (each test process adds its own)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS
