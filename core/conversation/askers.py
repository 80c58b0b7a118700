"""The asker of a turn: who started it, found from what a click names (a message of the turn,
its run, or a question it asked). The policy (`Policy.check_act`, `Policy.check_approve`)
decides with it whether the clicker may act on the turn."""

from __future__ import annotations

from core.chat import policy


async def of_message(message_id: int) -> str | None:
    """Who started the turn a message belongs to (None: nobody on a platform wrote it)."""
    return await policy.asker_of_message(message_id)


async def of_run(run_id: str) -> str | None:
    """Who started the turn a run answers."""
    return await policy.asker_of_run(run_id)


async def of_pause(pause_id: int) -> str | None:
    """Who started the turn that asked a clarify question or a tool approval."""
    return await policy.asker_of_pause(pause_id)
