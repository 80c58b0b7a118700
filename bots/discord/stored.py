"""Read a stored answer back as the view its run had, to render it after a switch or a restart."""

from __future__ import annotations

from dataclasses import replace

from bots.discord.render.turn import Versions
from core import tree
from core.message_views import log_record
from core.models import ChatMessageLog, MessageStatus
from core.runtime.updates import RunUpdate
from core.thinking import replay


async def stored_update(message_id: int) -> RunUpdate:
    """The assistant message as a RunUpdate, its thinking replayed from its log."""
    message = await tree.get_message(message_id)
    rows = await ChatMessageLog.filter(message_id=message_id).order_by("seq")
    state = replay(log_record(row) for row in rows)
    status = MessageStatus(message.status)
    if status == MessageStatus.SUCCESS and state.final_text is None:
        state = replace(state, final_text=message.content)
    return RunUpdate(
        run_id=message.run_id or "", session_id=message.session_id,
        user_message_id=message.parent_id or 0, message_id=message.id, status=status,
        state=state, error=message.error, model_id=message.model_id,
        skill_folder=message.skill_folder,
    )


async def versions_of(message_id: int) -> Versions:
    """Where the message sits among its sibling versions."""
    siblings = [m.id for m in await tree.versions(message_id)]
    index = siblings.index(message_id)
    previous = siblings[index - 1] if index > 0 else None
    following = siblings[index + 1] if index + 1 < len(siblings) else None
    return Versions(index, len(siblings), previous, following)
