"""A click acts only on the conversation it was clicked in.

Custom ids carry database ids (message, run, pause, session) so components work after a
restart; an interaction whose custom id names an id of another conversation (another thread
or DM, or one `/hermes new` replaced) is refused before its handler runs.
"""

from __future__ import annotations

from tortoise.expressions import Q

from bots.discord import ids
from core.errors import NotFound
from core.models import ChatMessage, ClarifyPause, ConversationBinding, Platform

ELSEWHERE = ("That button belongs to another conversation (another thread, or one replaced by "
             "`/hermes new`), so nothing was changed.")
_BY_MESSAGE = (ids.Action.REGENERATE, ids.Action.VERSION, ids.Action.THINKING, ids.Action.PAGE,
               ids.Action.SUMMARY, ids.Action.FEEDBACK)
_BY_PAUSE = (ids.Action.CHOICE, ids.Action.CUSTOM, ids.Action.ANSWER)
_BY_SESSION = (ids.Action.MODEL, ids.Action.SKILL)


async def check_here(action: ids.ActionId, channel_id: int | None) -> None:
    """NotFound unless the session `action` names is bound to channel (or thread) `channel_id`.
    Ids that name nothing are left to the handler, which says so."""
    session_id = await _session_of(action)
    if session_id is None:
        return
    here = Q(thread=str(channel_id)) | Q(thread="", channel=str(channel_id))
    bound = ConversationBinding.filter(here, session_id=session_id, platform=Platform.DISCORD)
    if channel_id is None or not await bound.exists():
        raise NotFound(ELSEWHERE)


async def _session_of(action: ids.ActionId) -> int | None:
    try:
        if action.action in _BY_SESSION:
            return action.number()
        if action.action in _BY_MESSAGE:
            rows = await ChatMessage.filter(id=action.number()).values_list("session_id", flat=True)
        elif action.action in _BY_PAUSE:
            rows = await ClarifyPause.filter(id=action.number()).values_list(
                "message__session_id", flat=True)
        elif action.action is ids.Action.STOP:
            rows = await ChatMessage.filter(run_id=action.args[0]).values_list("session_id", flat=True)
        else:
            return None
    except (ValueError, IndexError):
        return None  # a malformed custom id: the handler refuses it
    return rows[0] if rows else None
