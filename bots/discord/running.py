"""Which run of a session this process drives (for the Stop button of a "busy" refusal)."""

from __future__ import annotations

from core.runtime.pool import RunPool


def running_in(pool: RunPool, session_id: int) -> str | None:
    """The run in flight (or queued) in the session, if this process drives it."""
    return next((u.run_id for u in pool.active() if u.session_id == session_id), None)
