"""Resident memory of this process and the Bridge child, from /proc (Linux): the high-water
mark is reset when the load starts, so `peak - baseline` is what the load added."""

from __future__ import annotations

from pathlib import Path


def rss_kib(pid: int | str = "self", field: str = "VmRSS") -> int:
    """A `/proc/<pid>/status` memory field (VmRSS now, VmHWM peak) in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise LookupError(f"no {field} for process {pid}")


def reset_peak(pid: int | str = "self") -> int:
    """Start a new high-water mark (clear_refs 5); returns the RSS it starts from."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")
    return rss_kib(pid)


def added_per_run(pid: int | str, baseline: int, runs: int) -> float:
    """(peak RSS since `reset_peak` - the RSS then) / runs, in KiB."""
    return (rss_kib(pid, "VmHWM") - baseline) / max(1, runs)
