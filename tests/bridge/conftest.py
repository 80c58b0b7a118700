"""A real Bridge for the whole module run, HERMES_HOME in a temporary directory, and a
scripted LLM per test (each run names it in `model`, so tests never share replies)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bridge.hermes_home import DEFAULT_CONFIG_YAML
from bridge.settings import BridgeSettings
from tests.bridge.harness import RunningBridge, running_bridge
from tests.fakes.llm_server import ScriptedLLM

# One retry instead of three keeps "LLM down" tests fast; the rest is the Bridge's default.
TEST_CONFIG_YAML = DEFAULT_CONFIG_YAML + "agent:\n  api_max_retries: 1\n"


@pytest.fixture(scope="session")
def hermes_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("hermes-home")
    (home / "config.yaml").write_text(TEST_CONFIG_YAML, encoding="utf-8")
    return home


@pytest.fixture(scope="session")
def bridge_settings(hermes_home: Path) -> BridgeSettings:
    # Every Bridge in this process must share one HERMES_HOME (it is process-wide).
    return BridgeSettings(hermes_home=str(hermes_home), heartbeat_seconds=0.3)


@pytest.fixture(scope="session")
async def bridge(bridge_settings: BridgeSettings) -> AsyncIterator[RunningBridge]:
    async with running_bridge(bridge_settings) as running:
        yield running


@pytest.fixture
async def llm() -> AsyncIterator[ScriptedLLM]:
    async with ScriptedLLM() as server:
        yield server
