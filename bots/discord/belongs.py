"""A click acts only on the conversation it was clicked in (`core.conversation.bindings`).

Custom ids carry database ids (message, run, pause, session) so components work after a
restart; an interaction whose custom id names an id of another conversation (another thread
or DM, or one `/hermes new` replaced) is refused before its handler runs.
"""

from __future__ import annotations

from bots.discord import ids
from core.conversation import bindings
from core.conversation.refusals import ELSEWHERE
from core.errors import NotFound
from core.models import Platform

_BY_MESSAGE = (ids.Action.REGENERATE, ids.Action.VERSION, ids.Action.THINKING, ids.Action.PAGE,
               ids.Action.SUMMARY, ids.Action.FEEDBACK)
_BY_PAUSE = (ids.Action.CHOICE, ids.Action.CUSTOM, ids.Action.ANSWER)
_BY_SESSION = (ids.Action.MODEL, ids.Action.SKILL)


async def check_here(action: ids.ActionId, channel_id: int | None) -> None:
    """NotFound unless the session `action` names is bound to channel (or thread) `channel_id`:
    a thread of a guild channel, or a DM channel. Ids that name nothing are left to the
    handler, which says so."""
    session_id = await _session_of(action)
    if session_id is None:
        return
    here = str(channel_id)
    if channel_id is None or not (
        await bindings.is_bound(session_id, Platform.DISCORD, thread=here)
        or await bindings.is_bound(session_id, Platform.DISCORD, channel=here, thread="")
    ):
        raise NotFound(ELSEWHERE)


async def _session_of(action: ids.ActionId) -> int | None:
    try:
        if action.action in _BY_SESSION:
            return action.number()
        if action.action in _BY_MESSAGE:
            return await bindings.session_of_message(action.number())
        if action.action in _BY_PAUSE:
            return await bindings.session_of_pause(action.number())
        if action.action is ids.Action.STOP:
            return await bindings.session_of_run(action.args[0])
    except (ValueError, IndexError):
        return None  # a malformed custom id: the handler refuses it
    return None
