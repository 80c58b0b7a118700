"""`served`: a newcomer's `serve` (tests/support/newcomer.py) for the terminal chat's tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.fakes.llm_server import ScriptedLLM
from tests.support.newcomer import Service, service


@pytest.fixture
async def served(tmp_path: Path, llm: ScriptedLLM) -> AsyncIterator[Service]:
    async with service(tmp_path, llm) as running:
        yield running
