"""Read models of sessions for the admin list and detail: bindings, last message, run in flight."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from core.chat.tree import leaf_ids
from core.chat.sessions import get_session, list_sessions
from core.store.models import (
    IN_FLIGHT,
    ChatMessage,
    ChatSession,
    ConversationBinding,
    FeedbackValue,
    Platform,
    SessionStatus,
)

PREVIEW_CHARS = 120
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """A session with what a list row shows beside it."""

    session: ChatSession
    bindings: tuple[ConversationBinding, ...]
    last_message_preview: str | None
    has_active_run: bool


@dataclass(frozen=True, slots=True)
class SummaryPage:
    items: list[SessionSummary]
    next_cursor: str | None


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """One line of at most `limit` characters: whitespace runs collapsed, an ellipsis if cut."""
    line = _SPACES.sub(" ", text).strip()
    return line if len(line) <= limit else line[: limit - 1] + "…"


async def list_summaries(
    *,
    status: SessionStatus | None = None,
    platform: Platform | None = None,
    q: str | None = None,
    limit: int = 50,
    cursor: str | None = None,
    feedback: FeedbackValue | None = None,
    waiting: bool = False,
    channel: str | None = None,
    person: str | None = None,
) -> SummaryPage:
    """One page of `core.chat.sessions.list_sessions`, each session summarised (a few queries a page)."""
    page = await list_sessions(status=status, platform=platform, q=q, limit=limit, cursor=cursor,
                               feedback=feedback, waiting=waiting, channel=channel, person=person)
    return SummaryPage(await summarize(page.items), page.next_cursor)


async def session_summary(session_id: int, previews: bool = True) -> SessionSummary:
    """The summary of one session, or NotFound; without `previews` its last words are left
    out (None), which saves a walk of its whole active branch."""
    return (await summarize([await get_session(session_id)], previews))[0]


async def summarize(sessions: Sequence[ChatSession], previews: bool = True) -> list[SessionSummary]:
    """Summaries of these sessions, in their order, with three queries whatever their number
    (two without `previews`)."""
    ids = [s.id for s in sessions]
    if not ids:
        return []
    bindings: dict[int, list[ConversationBinding]] = defaultdict(list)
    for binding in await ConversationBinding.filter(session_id__in=ids).order_by("id"):
        bindings[binding.session_id].append(binding)
    busy = set(
        await ChatMessage.filter(session_id__in=ids, status__in=IN_FLIGHT)
        .distinct().values_list("session_id", flat=True)
    )
    said = await _last_message_previews(ids) if previews else {}
    return [
        SessionSummary(s, tuple(bindings[s.id]), said.get(s.id), s.id in busy)
        for s in sessions
    ]


async def has_active_run(session_id: int) -> bool:
    """Whether a message of the session is QUEUED or RUNNING (on any replica)."""
    return await ChatMessage.filter(session_id=session_id, status__in=IN_FLIGHT).exists()


async def _last_message_previews(session_ids: list[int]) -> dict[int, str]:
    # The last message with text on each active branch: an assistant still running has none
    # yet, so the user message it answers stands in for it. Where each branch ends is read,
    # not the branches (one of 10,000 messages is on the list's first page).
    leaves = {sid: leaf for sid, leaf in (await leaf_ids(session_ids)).items() if leaf}
    rows = {m: (parent, text) for m, parent, text in await ChatMessage.filter(
        id__in=list(leaves.values())).values_list("id", "parent_id", "content")}
    parents = [parent for parent, _ in rows.values() if parent is not None]
    texts = {m: text for m, (_, text) in rows.items()}
    if parents:
        texts.update(dict(await ChatMessage.filter(id__in=parents).values_list("id", "content")))
    said: dict[int, str] = {}
    for sid, leaf in leaves.items():
        tail = [leaf, rows.get(leaf, (None, ""))[0]]
        text = next((texts[i] for i in tail if i is not None and (texts.get(i) or "").strip()), None)
        if text is not None:
            said[sid] = preview(text)
    return said
