"""Fault fixtures (a plugin of tests/conftest.py): a real Bridge in a child process that a test
restarts, and a RunPool on it patient enough to outlast the restart (its default policy waits
about a minute)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from core.agent.bridge.stream import StreamPolicy
from core.runtime.pool import RunPool
from tests.conftest import TEST_CONFIG_YAML
from tests.fakes.llm_server import ScriptedLLM
from tests.faults.bridge_child import BridgeChild
from tests.support.runtime import catalogue_for, opened_pool

# ~29 s of reconnecting: a restarted Bridge is back in a few seconds, well within it.
PATIENT = StreamPolicy(read_timeout=5.0, connect_timeout=1.0, backoff_base=0.05, backoff_cap=0.5,
                       max_reconnects=60)


@pytest.fixture
async def bridge_child(tmp_path: Path) -> AsyncIterator[BridgeChild]:
    home = tmp_path / "hermes-home"
    home.mkdir()
    (home / "config.yaml").write_text(TEST_CONFIG_YAML, encoding="utf-8")
    child = BridgeChild(home)
    await child.start()
    try:
        yield child
    finally:
        await child.kill()


@pytest.fixture
async def child_pool(db: str, bridge_child: BridgeChild, llm: ScriptedLLM, skills_dir: Path
                     ) -> AsyncIterator[RunPool]:
    """A pool on the child Bridge whose default model is this test's scripted LLM."""
    async with opened_pool(bridge_child.url, catalogue_for(llm, skills_dir), PATIENT,
                           token=bridge_child.token) as runs:
        yield runs
