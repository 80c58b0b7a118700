"""Request and answer bodies of the message routes, and the message shape of session answers."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import msgspec

from admin.messages.thinking import ThinkingOut, thinking_out
from admin.usage.schemas import UsageOut, usage_out
from admin.text import MessageText
from core.conversation.browsing import MessagePage, MessageView, preview
from core.conversation.vocabulary import (
    AttachmentInfo,
    ChatMessage,
    ChatMessageLog,
    FeedbackValue,
    MessageStatus,
    Role,
    from_stored,
)


class LogOut(msgspec.Struct, frozen=True, rename="camel"):
    """One stored Bridge event of an assistant message; `meta` is its parsed JSON metadata."""

    seq: int
    kind: str
    content: str | None
    tool_name: str | None
    meta: Any
    created_at: datetime


class FeedbackOut(msgspec.Struct, frozen=True):
    """One person's 👍 (`good`) or 👎 (`bad`) on an answer."""

    user: str
    value: FeedbackValue
    at: datetime


class AttachmentOut(msgspec.Struct, frozen=True, rename="camel"):
    """A file of a user message; `id` names it in the download route."""

    id: int
    name: str
    mime_type: str
    size: int
    sha256: str


class ThreadContextOut(msgspec.Struct, frozen=True):
    """A message people wrote in the thread before the bot was asked, given to the agent with
    this user message; `bot` marks another bot's message, `files` its files' names."""

    author: str
    text: str
    at: datetime | None
    files: list[str]
    bot: bool


class MessageOut(msgspec.Struct, frozen=True, rename="camel"):
    """A node of the message tree; assistant messages carry `logs`, replayed `thinking`,
    `feedback` and `usage` (what their run's model calls spent), user messages their
    `attachments` and `threadContext` (the thread's earlier messages the agent was given with
    it)."""

    id: int
    session_id: int
    parent_id: int | None
    role: Role
    status: MessageStatus
    content: str
    is_active: bool
    branch_order: int
    model_id: str | None
    skill_folder: str | None
    run_id: str | None
    author: str | None
    error: str | None
    created_at: datetime
    completed_at: datetime | None
    logs: list[LogOut] | None
    thinking: ThinkingOut | None
    feedback: list[FeedbackOut] | None = None
    attachments: list[AttachmentOut] | None = None
    thread_context: list[ThreadContextOut] | None = None
    usage: UsageOut | None = None


class MessagePageOut(msgspec.Struct, frozen=True, rename="camel"):
    messages: list[MessageOut]
    has_more: bool


class MessageEdit(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The new text of a user message."""

    content: MessageText


class EditOut(msgspec.Struct, frozen=True, rename="camel"):
    """The new user message (a sibling version of the edited one); no run was started."""

    new_message_id: int


class VersionOut(msgspec.Struct, frozen=True, rename="camel"):
    message_id: int
    branch_order: int
    is_active: bool
    created_at: datetime
    preview: str


def message_out(view: MessageView) -> MessageOut:
    m = view.message
    assistant = m.role == Role.ASSISTANT
    return MessageOut(
        id=m.id, session_id=m.session_id, parent_id=m.parent_id, role=m.role, status=m.status,
        content=m.content, is_active=m.is_active, branch_order=m.branch_order,
        model_id=m.model_id, skill_folder=m.skill_folder, run_id=m.run_id, author=m.author,
        error=m.error, created_at=m.created_at, completed_at=m.completed_at,
        logs=[_log_out(row) for row in view.logs] if assistant else None,
        thinking=thinking_out(view.thinking) if view.thinking is not None else None,
        feedback=[FeedbackOut(f.user, f.value, f.at) for f in view.feedback] if assistant else None,
        attachments=[attachment_out(a) for a in view.attachments] if m.role == Role.USER else None,
        thread_context=_thread_context_out(m) if m.role == Role.USER else None,
        usage=usage_out(view.usage) if view.usage is not None else None,
    )


def _thread_context_out(message: ChatMessage) -> list[ThreadContextOut]:
    return [ThreadContextOut(e.author, e.text, e.at, list(e.files), e.bot)
            for e in from_stored(message.thread_context)]


def attachment_out(info: AttachmentInfo) -> AttachmentOut:
    return AttachmentOut(info.id, info.name, info.mime_type, info.size, info.sha256)


def message_page_out(page: MessagePage) -> MessagePageOut:
    return MessagePageOut([message_out(v) for v in page.messages], page.has_more)


def versions_out(versions: list[ChatMessage]) -> list[VersionOut]:
    return [
        VersionOut(m.id, m.branch_order, m.is_active, m.created_at, preview(m.content))
        for m in versions
    ]


def _log_out(row: ChatMessageLog) -> LogOut:
    return LogOut(row.seq, row.kind, row.content, row.tool_name, _meta(row.meta_json), row.created_at)


def _meta(meta_json: str | None) -> Any:
    if meta_json is None:
        return None
    try:
        return json.loads(meta_json)
    except ValueError:
        return meta_json  # shown as stored rather than hidden
