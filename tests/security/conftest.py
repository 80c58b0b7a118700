"""Fixtures of the security tests: the Slack, Discord and runtime fixtures of their own suites,
reused as they are (each test names the requirement of issue #8 §5 it proves)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from core.runtime.pool import RunPool
from tests.admin.conftest import AUTH, admin_on
from tests.fakes.changes import WAIT


@pytest.fixture
async def admin_url(fake_pool: RunPool) -> AsyncIterator[str]:
    """The admin API (ADMIN_TOKEN set) on the fake Bridge's run pool, served over HTTP."""
    async with admin_on(fake_pool) as url:
        yield url


@pytest.fixture
async def api(admin_url: str) -> AsyncIterator[httpx.AsyncClient]:
    """A client that sends the admin token."""
    async with httpx.AsyncClient(base_url=admin_url, headers=AUTH, timeout=WAIT) as client:
        yield client


@pytest.fixture
async def anonymous(admin_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=admin_url, timeout=WAIT) as client:
        yield client
