"""The hostile-input bench at test size: `python -m bench.hostile --quick` (a child process,
as its README command runs it) on this test's database. Its timings are the bench's business
(bench/README.md); this test asserts the run completes and every hostile PDF is named."""

from __future__ import annotations

from tests.load.child import run_module

DEADLINE = 120.0  # seconds for the whole child process; it usually takes about 20


async def test_the_hostile_bench_runs_and_names_every_hostile_pdf(db: str) -> None:
    returncode, out, err = await run_module(
        "bench.hostile", "--quick", "--parse-seconds", "1", "--database", db, deadline=DEADLINE)
    assert returncode == 0, f"{out}\n{err[-4000:]}"
    rows = {line[:22].strip(): line[22:].split() for line in out.splitlines()}
    assert rows["phase"] == ["without", "with", "PDFs", "only", "images", "only"]
    assert rows["answered"] == ["6/6"] * 4
    assert rows["hostile PDFs named"] == ["0/0", "2/2", "2/2", "0/0"]
    assert rows["longest loop stall"].count("ms") == 4  # a figure a phase
