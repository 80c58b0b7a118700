"""A click acts only on the conversation it was clicked in (`core.conversation.bindings`).

Buttons and menus carry database ids (message, pause, run, session) so they work after a
restart; a request that names an id of another conversation (another thread or channel, or a
conversation `/hermes new` replaced) is refused before anything changes.
"""

from __future__ import annotations

from core import tree
from core.conversation import bindings
from core.conversation.refusals import ELSEWHERE
from core.errors import NotFound
from core.models import ChatMessage, Platform

from .inbound import Click
from .places import is_dm


async def check_session(clicked: Click, session_id: int | None) -> None:
    """NotFound unless session `session_id` is bound to the channel (and thread) of the click.
    A click outside any thread (the menu a slash command answers with) names only a channel.
    None (the id named nothing) is left to the handler, which says so."""
    if session_id is None:
        return
    thread = clicked.thread_ts if clicked.thread_ts and not is_dm(clicked.channel or "") else None
    if not clicked.channel or not await bindings.is_bound(
            session_id, Platform.SLACK, workspace=clicked.team, channel=clicked.channel,
            thread=thread):
        raise NotFound(ELSEWHERE)


async def message_here(clicked: Click, message_id: int) -> ChatMessage:
    """The message `message_id`, if it is of the click's conversation."""
    message = await tree.get_message(message_id)
    await check_session(clicked, message.session_id)
    return message


async def pause_here(clicked: Click, pause_id: int) -> None:
    """NotFound unless the clarify question `pause_id` was asked in the click's conversation."""
    await check_session(clicked, await bindings.session_of_pause(pause_id))


async def run_here(clicked: Click, run_id: str) -> None:
    """NotFound unless run `run_id` answers in the click's conversation."""
    await check_session(clicked, await bindings.session_of_run(run_id))
