"""The scaling bench end to end on its smallest configuration (one `serve` replica, one
Bridge, one step of one conversation), as a child process: it runs, prints its table and
exits 0. It needs PostgreSQL (the bench makes a fresh database per configuration). Figures are
the bench's business (bench/README.md); this test asserts none of them."""

from __future__ import annotations

import pytest

from tests.conftest import BACKEND
from tests.load.child import run_module

# `db`: it runs in the PostgreSQL pass of the suite (the SQLite pass skips it).
pytestmark = [pytest.mark.db,
              pytest.mark.skipif(BACKEND != "postgres", reason="the bench runs on PostgreSQL")]
DEADLINE = 120.0  # usually about 20 s; two processes start on two shared cores


async def test_the_scaling_bench_runs_end_to_end_on_one_replica_and_one_bridge() -> None:
    returncode, printed, err = await run_module(
        "bench.scaling", "--replicas", "1", "--bridges", "1", "--max-steps", "1",
        "--step-seconds", "1", "--start-rate", "60", deadline=DEADLINE)
    assert returncode == 0, err[-4000:]
    assert "| 1 | 1 |" in printed, printed  # the one configuration's row
    assert "Slack only" in printed, printed
    assert "answers in the wrong thread: 0" in printed, printed
