"""Which session a platform thread is, and where a session lives on a platform.

A thread (a Slack thread, a Discord thread or DM) is bound to one session; `/hermes new`
binds it to a fresh one, and the newest binding of a session is where it shows.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from core.chat import sessions
from core.chat.sessions import ThreadKey, thread_binding
from core.store.db import first_value
from core.store.models import (
    BusyMessage,
    ChatMessage,
    ChatSession,
    ClarifyPause,
    ConversationBinding,
    Platform,
    Role,
)


@dataclass(frozen=True, slots=True)
class Recent:
    """A thread whose conversation was active lately: its session, and the newest of its
    people's messages written down there (a platform id; 0 if none has a number)."""

    key: ThreadKey
    session_id: int
    newest: int


async def bound_session(key: ThreadKey) -> ChatSession | None:
    """The session bound to a thread, without creating one."""
    binding = await thread_binding(key)
    return binding.session if binding else None


async def session_for_thread(key: ThreadKey, *, opened: bool = False) -> tuple[ChatSession, bool]:
    """The session bound to a thread, binding a new one when it has none (True: made now, for
    this message; a replica that binds it first wins, and both use its session). `opened`: the
    message opened the thread (a mention outside any thread), which then has none to look for."""
    return await sessions.session_for_thread(key, look_first=not opened)


async def active_since(platform: Platform, since: datetime, workspaces: Collection[str],
                       limit: int = 200) -> list[Recent]:
    """The threads of `platform` in `workspaces` whose conversations had a message since
    `since`, the latest first (at most `limit`). `newest` compares ids as numbers, for a
    platform whose ids count up with time (Discord's)."""
    bound = await ConversationBinding.filter(
        platform=platform, workspace__in=list(workspaces), session__last_message_at__gte=since,
    ).order_by("-session__last_message_at", "-id").limit(limit)
    said = await ChatMessage.filter(
        session_id__in=[b.session_id for b in bound], role=Role.USER,
        platform_message_id__isnull=False).values_list("session_id", "platform_message_id")
    newest: dict[int, int] = {}
    for session_id, platform_id in said:
        if str(platform_id).isdigit():
            newest[session_id] = max(newest.get(session_id, 0), int(platform_id))
    return [Recent(ThreadKey(b.platform, b.workspace, b.channel, b.thread), b.session_id,
                   newest.get(b.session_id, 0)) for b in bound]


async def written_down(session_id: int, platform_message_id: str) -> bool:
    """Whether a person's message was written down in the session: as a turn, or kept while
    the thread was busy (a message handled again must not be taken twice)."""
    wanted = {"session_id": session_id, "platform_message_id": platform_message_id}
    return (await ChatMessage.filter(role=Role.USER, **wanted).exists()
            or await BusyMessage.filter(**wanted).exists())


async def latest_binding(session_id: int, platform: Platform) -> ConversationBinding | None:
    """The thread of `platform` the session was bound to last (where it shows now)."""
    return await ConversationBinding.filter(
        session_id=session_id, platform=platform).order_by("-id").first()


async def latest_in_channel(platform: Platform, workspace: str,
                            channel: str) -> ConversationBinding | None:
    """The binding of the most recently active conversation of a channel."""
    return await ConversationBinding.filter(
        platform=platform, workspace=workspace, channel=channel,
    ).select_related("session").order_by("-session__last_message_at", "-id").first()


async def is_bound(session_id: int, platform: Platform, *, workspace: str | None = None,
                   channel: str | None = None, thread: str | None = None) -> bool:
    """Whether the session is bound to a thread matching these (None: any value). This is
    "belongs to this conversation": a click acts on a session only from where it lives."""
    wanted = {k: v for k, v in (("workspace", workspace), ("channel", channel),
                                ("thread", thread)) if v is not None}
    return await ConversationBinding.filter(
        session_id=session_id, platform=platform, **wanted).exists()


async def session_of_message(message_id: int) -> int | None:
    """The session of a message (None: no such message)."""
    return await first_value(ChatMessage.filter(id=message_id).values_list("session_id", flat=True))


async def session_of_pause(pause_id: int) -> int | None:
    """The session of a clarify question (None: no such question)."""
    return await first_value(ClarifyPause.filter(id=pause_id).values_list("message__session_id", flat=True))


async def session_of_run(run_id: str) -> int | None:
    """The session a run answers in (None: no such run)."""
    return await first_value(ChatMessage.filter(run_id=run_id).values_list("session_id", flat=True))
