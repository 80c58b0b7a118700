"""What an operator watches (the console's Now page and a conversation's answers): the runs in
flight, here and on other replicas; the questions and tool approvals waiting on a person, oldest
first; and every question an answer asked, with who answered what and when."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from core.chat.message_views import CHUNK
from core.conversation.views import stored_update
from core.runtime.clarify import view
from core.runtime.pool import RunPool
from core.runtime.updates import PauseView, RunUpdate
from core.store.models import IN_FLIGHT, ChatMessage, ChatSession, ClarifyPause, PauseStatus, Role

MAX_WAITING = 200  # questions listed at once: more than anyone answers in one sitting


@dataclass(frozen=True, slots=True)
class Asked:
    """A question (or tool approval) an answer asked, with when it was asked and answered."""

    pause: PauseView
    asked_at: datetime
    answered_at: datetime | None


@dataclass(frozen=True, slots=True)
class Waiting:
    """A question or approval nobody has answered yet, and where it was asked."""

    asked: Asked
    run_id: str
    session_id: int
    title: str | None
    message_id: int


@dataclass(frozen=True, slots=True)
class InFlight:
    """A run queued or running; `here`: this process drives it (its view is live, a queued
    one knows its place), else another replica does (its view is the stored one)."""

    update: RunUpdate
    title: str | None
    here: bool


async def asked_in(message_ids: Sequence[int]) -> dict[int, list[Asked]]:
    """Every question these assistant messages asked, in the order asked, by message."""
    found: dict[int, list[Asked]] = defaultdict(list)
    for start in range(0, len(message_ids), CHUNK):
        chunk = list(message_ids[start : start + CHUNK])
        for pause in await ClarifyPause.filter(message_id__in=chunk).order_by("id"):
            found[pause.message_id].append(_asked(pause))
    return dict(found)


async def waiting_now(limit: int = MAX_WAITING) -> list[Waiting]:
    """Questions and approvals waiting on a person, oldest first, in every conversation."""
    pauses = await ClarifyPause.filter(status=PauseStatus.UNANSWERED).order_by("created_at", "id") \
        .limit(limit)
    sessions = dict(await ChatMessage.filter(id__in=[p.message_id for p in pauses])
                    .values_list("id", "session_id"))
    titles = await _titles(sessions.values())
    return [
        Waiting(_asked(p), p.run_id, sessions[p.message_id], titles.get(sessions[p.message_id]),
                p.message_id)
        for p in pauses if p.message_id in sessions
    ]


async def runs_now(pool: RunPool) -> list[InFlight]:
    """Runs in flight: this process's (running first, then its queue in order), then those
    other replicas drive, oldest first (without a place: each replica keeps its own queue)."""
    here = pool.active()
    known = {u.run_id for u in here}
    # The predicate of the one-run-per-session index (migration 0008), so it is read, not scanned.
    rows = ChatMessage.filter(
        role=Role.ASSISTANT, status__in=IN_FLIGHT, queued_behind__isnull=True,
    ).exclude(run_id__in=known or {""}).order_by("id")
    others = [await stored_update(row["id"]) for row in await rows.values("id")]
    titles = await _titles([u.session_id for u in [*here, *others]])
    return [InFlight(u, titles.get(u.session_id), True) for u in here] + [
        InFlight(u, titles.get(u.session_id), False) for u in others
    ]


async def _titles(session_ids: Iterable[int]) -> dict[int, str | None]:
    ids = sorted(set(session_ids))
    return dict(await ChatSession.filter(id__in=ids).values_list("id", "title")) if ids else {}


def _asked(pause: ClarifyPause) -> Asked:
    return Asked(view(pause), pause.created_at, pause.answered_at)
