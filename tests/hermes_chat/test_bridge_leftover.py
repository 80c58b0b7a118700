"""Which recorded Bridge processes a starting `serve` ends, leaves alone or refuses to share a
port with (the end-to-end cases are in test_bridge_process.py)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from dataclasses import asdict
from pathlib import Path

import psutil
import pytest

from core.errors import InvalidInput
from hermes_chat.bridge_leftover import ChildRecord, ChildRecords, clear_the_port
from tests.support.processes import free_port

OURS = f"http://127.0.0.1:{free_port()}"  # nothing listens there
ELSEWHERE = f"http://127.0.0.1:{free_port()}"


@pytest.fixture
async def stand_in() -> AsyncIterator[asyncio.subprocess.Process]:
    """A live process playing a recorded child Bridge."""
    process = await asyncio.create_subprocess_exec(sys.executable, "-c",
                                                   "import time; time.sleep(120)")
    try:
        yield process
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()


def _record(records: ChildRecords, child: int, url: str, serve_pid: int,
            serve_started: float) -> Path:
    record = ChildRecord(serve_pid, serve_started, child, psutil.Process(child).create_time(),
                         "inst-1", url)
    records.folder.mkdir(parents=True, exist_ok=True)
    path = records.folder / f"{serve_pid}.json"
    path.write_text(json.dumps(asdict(record)), encoding="utf-8")
    return path


async def test_a_live_serve_s_bridge_elsewhere_is_left_alone_and_on_our_port_refused(
    tmp_path: Path, stand_in: asyncio.subprocess.Process
) -> None:
    records = ChildRecords(str(tmp_path))
    me = psutil.Process()  # this test process plays the other, running serve
    path = _record(records, stand_in.pid, ELSEWHERE, me.pid, me.create_time())
    await clear_the_port(OURS, records)
    assert stand_in.returncode is None and path.exists()
    _record(records, stand_in.pid, OURS, me.pid, me.create_time())
    with pytest.raises(InvalidInput, match=f"belongs to the running serve process {me.pid}"):
        await clear_the_port(OURS, records)
    assert stand_in.returncode is None


async def test_the_child_of_a_dead_serve_is_ended_wherever_it_serves(
    tmp_path: Path, stand_in: asyncio.subprocess.Process
) -> None:
    records = ChildRecords(str(tmp_path))
    path = _record(records, stand_in.pid, ELSEWHERE, 4_000_000, 1.0)  # no such serve process
    await clear_the_port(OURS, records)
    assert await asyncio.wait_for(stand_in.wait(), 20) != 0 and not path.exists()


async def test_a_reused_pid_is_not_taken_for_the_recorded_child(
    tmp_path: Path, stand_in: asyncio.subprocess.Process
) -> None:
    records = ChildRecords(str(tmp_path))
    path = _record(records, stand_in.pid, OURS, 4_000_000, 1.0)
    record = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**record, "started": record["started"] - 3600}), encoding="utf-8")
    await clear_the_port(OURS, records)  # same pid, another start time: not the child
    assert stand_in.returncode is None and not path.exists()
