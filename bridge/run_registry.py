"""All runs the Bridge knows, kept `retention_seconds` after they end."""

from __future__ import annotations

from collections.abc import Callable

from bridge.errors import RunExists, RunNotFound
from bridge.run_log import RunLog


class RunRegistry:
    """run_id → RunLog. A run waiting on clarify has not ended, so it is never pruned."""

    def __init__(self, retention_seconds: float, clock: Callable[[], float],
                 buffer_bytes: int = 0) -> None:
        self._retention = retention_seconds
        self._clock = clock
        self._buffer_bytes = buffer_bytes  # per run (BRIDGE_RUN_BUFFER_BYTES); 0: unbounded
        self._logs: dict[str, RunLog] = {}

    def create(self, run_id: str, session_id: str, first_id: int = 1) -> RunLog:
        """A new run whose events start at `first_id` (a resumed turn's continue the ids it
        had); `run_id` must be unused (finished runs count until pruned)."""
        if run_id in self._logs:
            raise RunExists(f"run {run_id!r} already exists")
        log = RunLog(run_id, session_id, self._clock, first_id=first_id,
                     max_bytes=self._buffer_bytes)
        self._logs[run_id] = log
        return log

    def get(self, run_id: str) -> RunLog:
        """The run's log, or RunNotFound."""
        log = self._logs.get(run_id)
        if log is None:
            raise RunNotFound(f"no run {run_id!r} (unknown, or ended more than the retention ago)")
        return log

    def find(self, run_id: str) -> RunLog | None:
        return self._logs.get(run_id)

    def active(self) -> list[RunLog]:
        """Runs that have not ended."""
        return [log for log in self._logs.values() if not log.finished]

    def prune(self) -> list[str]:
        """Forget runs that ended more than the retention ago; returns their ids."""
        horizon = self._clock() - self._retention
        expired = [
            run_id
            for run_id, log in self._logs.items()
            if log.ended_at is not None and log.ended_at < horizon
        ]
        for run_id in expired:
            del self._logs[run_id]
        return expired
