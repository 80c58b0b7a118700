"""What a person's message, edit or click does to the turns of a conversation.

Every busy check is the database's (a run in flight on any replica counts), and every tree
change happens after it, inside the same transaction that holds the session's row lock
(`core.runtime.records.locked_session`): a refused edit or switch changes nothing.
"""

from __future__ import annotations

import logging
from typing import Any

from core.chat import tree
from core.conversation.views import stored_update
from core.errors import Conflict, NotFound
from core.runtime import records
from core.runtime.pool import RunPool
from core.runtime.updates import RunUpdate
from core.store.db import first_value
from core.store.models import IN_FLIGHT, ChatMessage, MessageStatus, Role, utc_now

log = logging.getLogger(__name__)
STOPPED = "Stopped."


async def user_node(session_id: int, platform_message_id: str) -> ChatMessage | None:
    """The user node a platform message was taken as: its newest version (an edit adds a
    node with the same platform message id)."""
    return await ChatMessage.filter(
        session_id=session_id, platform_message_id=platform_message_id, role=Role.USER,
    ).order_by("-id").first()


async def author(message_id: int) -> str | None:
    """Who wrote a message (the platform's user id for a message from a platform)."""
    return await first_value(ChatMessage.filter(id=message_id).values_list("author", flat=True))


async def platform_id(message_id: int) -> str | None:
    """The platform's id of a message that came from a platform (a Slack ts)."""
    return await first_value(ChatMessage.filter(id=message_id).values_list("platform_message_id", flat=True)) or None


async def run_in_flight(session_id: int) -> str | None:
    """The run in flight (queued or running) in the session, on any replica."""
    return await records.busy_run(session_id)


async def write(pool: RunPool, session_id: int, text: str, *, author: str,
                platform_message_id: str, **fields: Any) -> RunUpdate | None:
    """A person wrote in the conversation: the run that answers it, or None when this
    platform message was taken already (a retry, a replay, another replica). Busy while a run
    is in flight; RateLimited over the author's quota."""
    if await user_node(session_id, platform_message_id) is not None:
        return None
    return await pool.start(session_id, text, author=author,
                            platform_message_id=platform_message_id, **fields)


async def edit(pool: RunPool, node: ChatMessage, text: str, *, author: str,
               platform_message_id: str, **fields: Any) -> RunUpdate | None:
    """A person edited a message the bot took as a turn: a new branch answering the new
    text (None when the text did not change: a link preview, not an edit)."""
    if text == node.content:
        return None
    return await pool.edit(node.id, text, author=author,
                           platform_message_id=platform_message_id, **fields)


async def edit_message(message_id: int, text: str) -> ChatMessage:
    """A new version of a user message, no run (the admin API's edit): refused while a run is
    in flight, as every other change of the tree."""
    message = await tree.get_message(message_id)
    async with records.locked_session(message.session_id):
        return await tree.edit(message_id, text, message.session_id)


async def switch_version(message_id: int, session_id: int | None = None) -> ChatMessage:
    """Make this version the active one (◀ ▶, the admin API's activate); refused while a
    run is in flight, since the running answer would land on a branch nobody sees."""
    message = await tree.get_message(message_id, session_id)
    async with records.locked_session(message.session_id):
        return await tree.activate(message.id, message.session_id)


async def stop(pool: RunPool, run_id: str) -> RunUpdate:
    """Stop a run from any replica. This process's runs stop here; a run driven elsewhere
    is aborted through the shared Bridge, and its end recorded at once (its driver records
    the same when the Bridge's `aborted` reaches it). Conflict once it has ended."""
    try:
        return await pool.stop(run_id)
    except NotFound:
        pass
    message = await ChatMessage.filter(run_id=run_id, role=Role.ASSISTANT).first()
    if message is None:
        raise NotFound(f"no run {run_id}")
    if message.status not in IN_FLIGHT:
        raise Conflict(f"run {run_id} has already ended: {message.status}")
    try:
        await pool.bridge.abort(run_id)
    except NotFound:  # queued elsewhere, or its driver is gone: the Bridge never ran it
        log.info("run %s is unknown to the Bridge; recording its stop", run_id)
    except Conflict:  # it finished on the Bridge just now: its driver records how
        raise Conflict(f"run {run_id} has already ended") from None
    await _record_stop(message.id)
    return await stored_update(message.id)


async def _record_stop(message_id: int) -> None:
    stopped = await ChatMessage.filter(id=message_id, status__in=IN_FLIGHT).update(
        status=MessageStatus.STOPPED, error=STOPPED, completed_at=utc_now())
    if stopped:
        await records.expire_questions(message_id)
