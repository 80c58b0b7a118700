"""Where a row shows on each platform: its `platform_refs`, one namespace per platform.

A row can show on several platforms at once (a session bound to a Slack thread and a
Discord one), so each platform reads and writes only its own key and keeps the others'.
"""

from __future__ import annotations

from typing import Any

from core.store.models import ChatMessage, ClarifyPause
from core.store.outage import transaction

Refs = dict[str, Any]


def refs_in(platform_refs: Any, platform: str) -> Refs:
    """The platform's part of a `platform_refs` value ({} when it has none, or junk)."""
    part = platform_refs.get(platform) if isinstance(platform_refs, dict) else None
    return dict(part) if isinstance(part, dict) else {}


async def read_refs(model: type[ChatMessage | ClarifyPause], row_id: int, platform: str) -> Refs:
    """The platform's refs of one row ({} for a missing row)."""
    rows = await model.filter(id=row_id).values_list("platform_refs", flat=True)
    return refs_in(rows[0], platform) if rows else {}


async def save_refs(model: type[ChatMessage | ClarifyPause], row_id: int, platform: str,
                    refs: Refs) -> None:
    """Set the platform's refs of one row, keeping every other platform's (merge, not replace)."""
    async with transaction():
        row = await model.select_for_update().get_or_none(id=row_id)
        if row is None:
            return
        current = row.platform_refs if isinstance(row.platform_refs, dict) else {}
        await model.filter(id=row_id).update(platform_refs={**current, platform: refs})


async def message_refs(message_id: int, platform: str) -> Refs:
    """The platform's refs of a message: where a turn, or a compaction's divider, shows."""
    return await read_refs(ChatMessage, message_id, platform)


async def save_message_refs(message_id: int, platform: str, refs: Refs) -> None:
    """Set the platform's refs of a message, keeping every other platform's."""
    await save_refs(ChatMessage, message_id, platform, refs)


async def pause_refs(pause_id: int, platform: str) -> Refs:
    """The platform's refs of a clarify question or tool approval: where it was posted."""
    return await read_refs(ClarifyPause, pause_id, platform)


async def save_pause_refs(pause_id: int, platform: str, refs: Refs) -> None:
    """Set the platform's refs of a clarify question or tool approval, keeping the others'."""
    await save_refs(ClarifyPause, pause_id, platform, refs)
