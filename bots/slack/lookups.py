"""Read-side questions the adapter asks of the database: which session a thread is bound to,
which user message a Slack ts is, and a stored turn rebuilt as a RunUpdate."""

from __future__ import annotations

from dataclasses import replace

from core import tree
from core.events import LogRecord
from core.models import (
    ChatMessage,
    ChatMessageLog,
    ChatSession,
    ConversationBinding,
    MessageStatus,
    Platform,
    Role,
)
from core.runtime.updates import RunUpdate
from core.sessions import ThreadKey
from core.thinking import replay

from .answer_view import Versions, versions_of


async def bound_session(key: ThreadKey) -> ChatSession | None:
    """The session of a thread, without creating one."""
    binding = await ConversationBinding.get_or_none(
        platform=key.platform, workspace=key.workspace, channel=key.channel, thread=key.thread
    ).select_related("session")
    return binding.session if binding else None


async def latest_binding(session_id: int) -> ConversationBinding | None:
    """The Slack thread a session was last bound to."""
    return await ConversationBinding.filter(
        session_id=session_id, platform=Platform.SLACK).order_by("-id").first()


async def latest_in_channel(team: str, channel: str) -> ConversationBinding | None:
    """The binding of the most recently active conversation in a channel."""
    return await ConversationBinding.filter(
        platform=Platform.SLACK, workspace=team, channel=channel,
    ).select_related("session").order_by("-session__last_message_at", "-id").first()


async def user_message(session_id: int, ts: str) -> ChatMessage | None:
    """The newest user node for a Slack message (an edit adds a node with the same ts)."""
    return await ChatMessage.filter(
        session_id=session_id, platform_message_id=ts, role=Role.USER).order_by("-id").first()


async def stored_update(message_id: int) -> RunUpdate:
    """A finished (or any) assistant turn as a RunUpdate, its state replayed from the logs."""
    message = await tree.get_message(message_id)
    rows = await ChatMessageLog.filter(message_id=message_id).order_by("seq")
    state = replay(LogRecord(seq=r.seq, kind=r.kind, content=r.content, tool_name=r.tool_name,
                             meta_json=r.meta_json, created_at=r.created_at) for r in rows)
    if message.status == MessageStatus.SUCCESS:
        state = replace(state, final_text=message.content)
    return RunUpdate(
        run_id=message.run_id or "", session_id=message.session_id,
        user_message_id=message.parent_id or 0, message_id=message.id,
        status=MessageStatus(message.status), state=state,
        error=message.error, model_id=message.model_id, skill_folder=message.skill_folder,
    )


async def versions(message_id: int) -> Versions:
    siblings = await tree.versions(message_id)
    return versions_of(message_id, [m.id for m in siblings])


async def author(message_id: int) -> str | None:
    """Who wrote a message (a Slack user id for messages from Slack)."""
    row = await ChatMessage.filter(id=message_id).values_list("author", flat=True)
    return row[0] if row else None
