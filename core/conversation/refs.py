"""Where a row shows on each platform: its `platform_refs`, one namespace per platform (a
turn's messages on its user message, a question's on its pause, a divider's on its summary).

A turn's messages are recorded in one place on every platform: its USER message. The versions
of its answer (Regenerate, ◀ ▶) show in the same messages, so they share that record; an edit
is a new user message, a new turn with its own. `turn_refs` / `save_turn_refs` take the user
message or any of its answers.

A row can show on several platforms at once (a session bound to a Slack thread and a
Discord one), so each platform reads and writes only its own key and keeps the others'.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.store.models import ChatMessage, ClarifyPause, Role
from core.store.outage import transaction

Refs = dict[str, Any]


def refs_in(platform_refs: Any, platform: str) -> Refs:
    """The platform's part of a `platform_refs` value ({} when it has none, or junk)."""
    part = platform_refs.get(platform) if isinstance(platform_refs, dict) else None
    return dict(part) if isinstance(part, dict) else {}


async def _row_refs(model: type[ChatMessage | ClarifyPause], row_id: int, platform: str) -> Refs | None:
    rows = await model.filter(id=row_id).values_list("platform_refs", flat=True)
    return refs_in(rows[0], platform) if rows else None


async def _save_refs(model: type[ChatMessage | ClarifyPause], row_id: int, platform: str,
                     refs: Refs) -> None:
    """Set the platform's refs of one row, keeping every other platform's (merge, not replace)."""
    async with transaction():
        row = await model.select_for_update().get_or_none(id=row_id)
        if row is None:
            return
        current = row.platform_refs if isinstance(row.platform_refs, dict) else {}
        await model.filter(id=row_id).update(platform_refs={**current, platform: refs})


async def message_refs(message_id: int, platform: str) -> Refs | None:
    """The platform's refs of a message ({} when it shows nowhere there); None for a missing
    message."""
    return await _row_refs(ChatMessage, message_id, platform)


async def save_message_refs(message_id: int, platform: str, refs: Refs) -> None:
    """Set the platform's refs of a message (a summary's divider; a turn's: `save_turn_refs`)."""
    await _save_refs(ChatMessage, message_id, platform, refs)


async def pause_refs(pause_id: int, platform: str) -> Refs:
    """The platform's refs of a clarify question or tool approval ({} for a missing one)."""
    return await _row_refs(ClarifyPause, pause_id, platform) or {}


async def save_pause_refs(pause_id: int, platform: str, refs: Refs) -> None:
    """Set the platform's refs of a clarify question or tool approval (where it shows)."""
    await _save_refs(ClarifyPause, pause_id, platform, refs)


@dataclass(frozen=True, slots=True)
class TurnRefs:
    """A turn as a platform finds where it shows: its user message's id, the platform's refs
    of the turn, the platform's id of the person's message ("" none) and whether the turn
    answers an edit (a new version of the user message)."""

    user_message_id: int
    refs: Refs
    platform_message_id: str
    edited: bool


async def turn_refs(message_id: int, platform: str) -> TurnRefs | None:
    """The platform's record of the turn of `message_id` (its user message or an answer of
    it); None: no such message."""
    user = await _turn_user(message_id)
    if user is None:
        return None
    return TurnRefs(user.id, refs_in(user.platform_refs, platform), user.platform_message_id or "",
                    user.branch_order > 0)


async def save_turn_refs(message_id: int, platform: str, refs: Refs) -> None:
    """Record where the turn of `message_id` (its user message or an answer of it) shows."""
    if (user := await _turn_user(message_id)) is not None:
        await _save_refs(ChatMessage, user.id, platform, refs)


async def _turn_user(message_id: int) -> ChatMessage | None:
    message = await ChatMessage.get_or_none(id=message_id)
    if message is not None and message.role == Role.ASSISTANT and message.parent_id is not None:
        return await ChatMessage.get_or_none(id=message.parent_id)
    return message
