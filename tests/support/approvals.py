"""Tool approvals on a real Bridge with `terminal` enabled (fixtures `terminal_bridge` and
`runs`, a plugin of tests/conftest.py): the scripted LLM asks to `rm -rf` the `victim`
directory the test owns."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest

from bridge.settings import BridgeSettings
from core.runtime.pool import RunPool
from core.runtime.updates import RunUpdate
from core.store.models import PauseKind, PauseStatus
from tests.bridge.harness import RunningBridge, running_bridge
from tests.core.runtime.waiting import until
from tests.fakes.llm_server import ScriptedLLM, ToolCall
from tests.support.runtime import catalogue_for, opened_pool

ASKER, ADMIN, OTHER = "U-asker", "U-admin", "U-other"


@pytest.fixture
def terminal_settings(bridge_settings: BridgeSettings) -> BridgeSettings:
    return replace(bridge_settings, toolsets=("terminal", "clarify"))


@pytest.fixture
async def terminal_bridge(terminal_settings: BridgeSettings) -> AsyncIterator[RunningBridge]:
    async with running_bridge(terminal_settings) as running:
        yield running


@pytest.fixture
async def runs(db: str, terminal_bridge: RunningBridge, llm: ScriptedLLM,
               skills_dir: Path) -> AsyncIterator[RunPool]:
    async with opened_pool(terminal_bridge.url, catalogue_for(llm, skills_dir)) as pool:
        yield pool


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    target = tmp_path / "victim"
    target.mkdir()
    return target


def rm(victim: Path) -> ToolCall:
    return ToolCall("terminal", {"command": f"rm -rf {victim}"})


async def asked(pool: RunPool, run_id: str, after: str | None = None) -> RunUpdate:
    return await until(pool, run_id, lambda u: u.approval is not None
                       and u.approval.kind == PauseKind.APPROVAL
                       and u.approval.status == PauseStatus.UNANSWERED
                       and u.approval.clarify_id != after)
