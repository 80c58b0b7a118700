"""A click acts only on the conversation it was clicked in.

Buttons and menus carry database ids (message, pause, run, session) so they work after a
restart; a request that names an id of another conversation (another thread or channel, or a
conversation `/hermes new` replaced) is refused before anything changes.
"""

from __future__ import annotations

from core import tree
from core.errors import NotFound
from core.models import ChatMessage, ClarifyPause, ConversationBinding, Platform

from .inbound import Click
from .places import is_dm

ELSEWHERE = ("that button belongs to another conversation (another thread, or one replaced by "
             "`/hermes new`), so nothing was changed")


async def check_session(clicked: Click, session_id: int) -> None:
    """NotFound unless session `session_id` is bound to the channel (and thread) of the click.
    A click outside any thread (the menu a slash command answers with) names only a channel."""
    bindings = ConversationBinding.filter(session_id=session_id, platform=Platform.SLACK,
                                          workspace=clicked.team, channel=clicked.channel or "")
    if clicked.thread_ts and not is_dm(clicked.channel or ""):
        bindings = bindings.filter(thread=clicked.thread_ts)
    if not clicked.channel or not await bindings.exists():
        raise NotFound(ELSEWHERE)


async def message_here(clicked: Click, message_id: int) -> ChatMessage:
    """The message `message_id`, if it is of the click's conversation."""
    message = await tree.get_message(message_id)
    await check_session(clicked, message.session_id)
    return message


async def pause_here(clicked: Click, pause_id: int) -> None:
    """NotFound unless the clarify question `pause_id` was asked in the click's conversation."""
    pause = await ClarifyPause.get_or_none(id=pause_id).select_related("message")
    if pause is not None:  # an unknown one is find_pause's to refuse
        await check_session(clicked, pause.message.session_id)


async def run_here(clicked: Click, run_id: str) -> None:
    """NotFound unless run `run_id` answers in the click's conversation."""
    message = await ChatMessage.filter(run_id=run_id).first()
    if message is not None:
        await check_session(clicked, message.session_id)
