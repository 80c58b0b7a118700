"""Stop a turn: one rule for our Stop button and for the native Stop of Slack's agent
session. The run stops on whichever replica drives it (`core.conversation.turns.stop`);
when no run of this process will show its end, its message is given the end here."""

from __future__ import annotations

from core.conversation import turns
from core.errors import Conflict, NotFound

from . import refs
from .answers import show_answer
from .services import Services


async def stop_run(services: Services, run_id: str) -> bool:
    """Stop run `run_id`; False when it had already ended (or never was)."""
    try:
        update = await turns.stop(services.pool, run_id)
    except (Conflict, NotFound):
        return False
    slot = await refs.slot_of(update.message_id)
    if services.pool.view(run_id) is None and slot is not None and slot.ts is not None:
        await show_answer(services, update, slot)  # no run of ours will show its end
    return True
