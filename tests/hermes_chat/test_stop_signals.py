"""Ctrl-C (SIGINT) and SIGTERM of a real `serve` with runs in flight (issue 27 §5): it stops
within STOP_SECONDS with no traceback, and the next `serve` finishes every run (the durable
turns of tests/hermes_chat/test_durable_e2e.py)."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest

from tests.fakes.llm_server import ScriptedLLM
from tests.support.durable import both_finish, check_outcome, two_runs_in_flight, world
from tests.support.replicas import Replica, replica

STOP_SECONDS = 5.0


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm-to-the-group", "sigint-to-serve"])
async def test_a_signal_stops_serve_within_seconds_and_loses_no_run(
    db: str, llm: ScriptedLLM, tmp_path: Path, how: str
) -> None:
    async with world(db, llm, tmp_path) as w:
        async with replica("first", w.tmp_path, w.settings, new_group=True) as first:
            flight = await two_runs_in_flight(w, first)  # one streaming (held), one on clarify
            took = await _stop(first, how)
        output = first.log.read_text(encoding="utf-8", errors="replace")
        assert took < STOP_SECONDS, f"{how}: stopped after {took:.1f}s\n{output[-3000:]}"
        assert first.process.returncode == 0, output[-3000:]
        assert "Traceback" not in output, output[-6000:]
        assert output.rstrip().endswith("stopped"), output[-3000:]
        async with replica("second", w.tmp_path, w.settings) as second:
            await both_finish(w, second, flight)
        await check_outcome(w, flight)


async def _stop(serve: Replica, how: str) -> float:
    """Send the signal (Ctrl-C: SIGINT to the terminal's whole process group, serve and its
    child Bridge alike; SIGTERM to the group as systemd does; SIGINT to serve alone) and
    return the seconds until serve exited."""
    start = time.monotonic()
    if how == "sigint-to-serve":
        serve.process.send_signal(signal.SIGINT)
    else:
        os.killpg(serve.process.pid, signal.SIGINT if how == "ctrl-c" else signal.SIGTERM)
    await asyncio.wait_for(serve.process.wait(), 60)
    return time.monotonic() - start

