"""Request and answer bodies of the session routes (camelCase JSON)."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from typing import Any

import msgspec

from admin.messages.schemas import MessageOut, message_out
from admin.text import ModelId, SkillFolder, Title
from admin.usage.schemas import UsageOut, usage_out
from core.conversation.browsing import SessionDetail, SessionSummary, SummaryPage, summarize
from core.conversation.session_commands import ResetOutcome, SessionChanges
from core.conversation.vocabulary import ChatSession, Memory, Platform, SessionStatus


class SessionCreate(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    title: Title | None = None
    model_id: ModelId | None = None
    skill_folder: SkillFolder | None = None


class SessionPatch(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    """Fields left out stay as they are; `modelId` / `skillFolder` null go back to the default."""

    title: Title | msgspec.UnsetType = msgspec.UNSET
    model_id: ModelId | None | msgspec.UnsetType = msgspec.UNSET
    skill_folder: SkillFolder | None | msgspec.UnsetType = msgspec.UNSET
    status: SessionStatus | msgspec.UnsetType = msgspec.UNSET

    def changes(self) -> SessionChanges:
        return SessionChanges(self.title, self.model_id, self.skill_folder, self.status)


class ResetIn(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    """`keepHistory` false also starts the conversation afresh (the old one stays a version)."""

    keep_history: bool = True


class BindingOut(msgspec.Struct, frozen=True):
    """A platform thread bound to the session (`thread` is empty in a DM)."""

    platform: Platform
    workspace: str
    channel: str
    thread: str


class SessionOut(msgspec.Struct, frozen=True, rename="camel"):
    id: int
    uuid: UUID
    title: str | None
    model_id: str | None
    skill_folder: str | None
    status: SessionStatus
    hermes_session: str
    created_at: datetime
    last_message_at: datetime
    updated_at: datetime
    last_summarized_at: datetime | None
    bindings: list[BindingOut]
    last_message_preview: str | None
    has_active_run: bool


class SessionPageOut(msgspec.Struct, frozen=True, rename="camel"):
    """One page, newest activity first; pass `nextCursor` as `cursor` for the next (null: last)."""

    items: list[SessionOut]
    next_cursor: str | None


class SessionDetailOut(msgspec.Struct, frozen=True, rename="camel"):
    """The session and its active branch, root to leaf; `usage`: what every run of the session
    spent (every version of every answer, on the active branch or not); `channelSettings`: the
    channel settings it keeps (those set where it started, when it started or an admin last
    applied them; docs/channels.md), by their stored names."""

    session: SessionOut
    messages: list[MessageOut]
    usage: UsageOut
    channel_settings: dict[str, Any]


class ResetOut(msgspec.Struct, frozen=True, rename="camel"):
    """A reset done: `bridgeReached` false means the Bridge could not be told to drop the old
    agent (logged); the session's next run starts a fresh agent all the same."""

    session: SessionOut
    agent_dropped: bool
    kept_history: bool
    bridge_reached: bool


class MemoryOut(msgspec.Struct, frozen=True, rename="camel"):
    """MEMORY.md and USER.md of the session's current Bridge session."""

    hermes_session: str
    memory: str
    user: str


def session_out(summary: SessionSummary) -> SessionOut:
    s = summary.session
    return SessionOut(
        id=s.id, uuid=s.uuid, title=s.title, model_id=s.model_id, skill_folder=s.skill_folder,
        status=s.status, hermes_session=s.hermes_session, created_at=s.created_at,
        last_message_at=s.last_message_at, updated_at=s.updated_at,
        last_summarized_at=s.last_summarized_at,
        bindings=[BindingOut(b.platform, b.workspace, b.channel, b.thread) for b in summary.bindings],
        last_message_preview=summary.last_message_preview, has_active_run=summary.has_active_run,
    )


def session_page_out(page: SummaryPage) -> SessionPageOut:
    return SessionPageOut([session_out(s) for s in page.items], page.next_cursor)


def detail_out(detail: SessionDetail) -> SessionDetailOut:
    return SessionDetailOut(session_out(detail.summary), [message_out(m) for m in detail.messages],
                            usage_out(detail.usage),
                            dict(detail.summary.session.channel_settings or {}))


async def describe(session: ChatSession) -> SessionOut:
    """A session as every route answers it: with bindings, preview and run flag."""
    return session_out((await summarize([session]))[0])


async def reset_out(outcome: ResetOutcome) -> ResetOut:
    return ResetOut(await describe(outcome.session), outcome.agent_dropped, outcome.kept_history,
                    outcome.bridge_reached)


def memory_out(memory: Memory) -> MemoryOut:
    return MemoryOut(memory.session_id, memory.memory, memory.user)
