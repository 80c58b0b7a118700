"""Chat sessions: create, bind to a platform thread, rename, title, touch, archive, delete, list."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tortoise.exceptions import IntegrityError
from pypika_tortoise import SqlContext
from pypika_tortoise.terms import Term
from tortoise.expressions import Q, Subquery
from tortoise.queryset import QuerySet

from core.errors import InvalidInput, NotFound
from core.text.field_errors import MAX_ID, InvalidField, check_text
from core.chat import channel_settings as channel_settings_module
from core.chat.feedback import with_feedback
from core.store.models import (
    ChatMessage,
    ChatSession,
    ClarifyPause,
    ConversationBinding,
    FeedbackValue,
    PauseStatus,
    Platform,
    SessionStatus,
    utc_now,
)
from core.store.outage import transaction
from core.store.paging import Cursor, decode_cursor, encode_cursor
from core.text.safe_text import shortened

TITLE_LENGTH = 30
MAX_TITLE = 255
_WHITESPACE_RUN = re.compile(r"\s*[\r\n]+\s*")


@dataclass(frozen=True, slots=True)
class ThreadKey:
    """Where a conversation lives on a platform: one thread is one session."""

    platform: Platform
    workspace: str
    channel: str
    thread: str = ""


@dataclass(frozen=True, slots=True)
class SessionPage:
    items: list[ChatSession]
    next_cursor: str | None


def new_hermes_session() -> str:
    """A fresh Bridge session id (`chat-<uuid>`)."""
    return f"chat-{uuid.uuid4()}"


async def create_session(
    *, title: str | None = None, model_id: str | None = None, skill_folder: str | None = None,
    channel_settings: dict[str, Any] | None = None,
) -> ChatSession:
    """Create an ACTIVE session; the title stays empty until the first user message names it.
    `channel_settings`: those of the channel it starts in, kept with it; they name its model
    and skill where they set one."""
    now = utc_now()
    chosen = {"model_id": model_id, "skill_folder": skill_folder,
              **channel_settings_module.session_choices(channel_settings or {})}
    return await ChatSession.create(
        uuid=uuid.uuid4(),
        title=_clean_title(title) if title else None,
        hermes_session=new_hermes_session(),
        channel_settings=channel_settings or None,
        created_at=now,
        last_message_at=now,
        updated_at=now,
        **chosen,
    )


async def create_in_channel(key: ThreadKey, **defaults: str | None) -> ChatSession:
    """A new session for a conversation in `key`'s channel, with that channel's settings."""
    settings = await channel_settings_module.stored(key.platform, key.workspace, key.channel)
    return await create_session(channel_settings=settings, **defaults)


async def get_session(session_id: int) -> ChatSession:
    """The session with this id, or NotFound."""
    session = await ChatSession.get_or_none(id=session_id)
    if session is None:
        raise NotFound(f"no chat session {session_id}")
    return session


async def session_for_thread(key: ThreadKey, *, look_first: bool = True,
                             **defaults: str | None) -> tuple[ChatSession, bool]:
    """The session bound to a platform thread, creating both if new; True when created.
    Without `look_first` (a thread that can have no session yet: its caller just opened it)
    the binding is made at once, and an existing one is read only if that is refused."""
    binding = await thread_binding(key) if look_first else None
    if binding is not None:
        return binding.session, False
    try:
        settings = await channel_settings_module.stored(key.platform, key.workspace, key.channel)
        async with transaction():
            session = await create_session(channel_settings=settings, **defaults)
            await ConversationBinding.create(session=session, **_key_fields(key))
        return session, True
    except IntegrityError:  # another replica or event bound it first: use theirs
        binding = await thread_binding(key)
        if binding is None:
            raise
        return binding.session, False


async def bind_thread(session_id: int, key: ThreadKey) -> None:
    """Bind one more platform thread to an existing session (e.g. `/hermes new` in a DM)."""
    await ConversationBinding.filter(**_key_fields(key)).delete()
    await ConversationBinding.create(session_id=session_id, **_key_fields(key))


async def thread_binding(key: ThreadKey) -> ConversationBinding | None:
    """The binding of a platform thread (with its session), if it has one."""
    return await ConversationBinding.get_or_none(**_key_fields(key)).select_related("session")


def _key_fields(key: ThreadKey) -> dict[str, Any]:
    return {
        "platform": key.platform,
        "workspace": key.workspace,
        "channel": key.channel,
        "thread": key.thread,
    }


def _clean_title(title: str) -> str:
    cleaned = _WHITESPACE_RUN.sub(" ", title).strip()
    if not cleaned:
        raise InvalidInput("a title cannot be empty")
    return shortened(cleaned, MAX_TITLE)


def title_from_message(text: str) -> str:
    """The automatic title: the message on one line, cut after a whole word within 30
    characters, an ellipsis marking the cut."""
    return shortened(_WHITESPACE_RUN.sub(" ", text).strip(), TITLE_LENGTH)


async def rename_session(session_id: int, title: str) -> ChatSession:
    """Set a user's title (it is never overwritten by the automatic one)."""
    await _update(session_id, title=_clean_title(title))
    return await get_session(session_id)


async def auto_title(session_id: int, first_user_text: str) -> None:
    """Title the session from its first user message, only while it has no title."""
    title = title_from_message(first_user_text)
    if title:
        await ChatSession.filter(id=session_id, title__isnull=True).update(
            title=title, updated_at=utc_now()
        )


async def touch_session(session_id: int, at: datetime | None = None) -> None:
    """Record activity now, so the session sorts first in the list."""
    now = at or utc_now()
    await _update(session_id, last_message_at=now)


async def set_session_status(session_id: int, status: SessionStatus) -> ChatSession:
    """Archive (or un-archive) a session."""
    await _update(session_id, status=status)
    return await get_session(session_id)


async def update_session_defaults(
    session_id: int, *, model_id: str | None = None, skill_folder: str | None = None
) -> ChatSession:
    """Change the model and/or skill the session's next runs use (None leaves one as it is)."""
    changes = {k: v for k, v in (("model_id", model_id), ("skill_folder", skill_folder)) if v}
    if changes:
        await _update(session_id, **changes)
    return await get_session(session_id)


async def renew_hermes_session(session_id: int) -> ChatSession:
    """Give the session a new Bridge session id, so its next run starts a fresh agent."""
    await _update(session_id, hermes_session=new_hermes_session())
    return await get_session(session_id)


async def delete_session(session_id: int) -> None:
    """Delete the session with its bindings, messages, logs and pauses (database cascade)."""
    async with transaction():
        # Unlink the tree first: SQLite cascades a parent chain by trigger recursion, which
        # stops at 1,000 levels, and a branch can be deeper than that.
        await ChatMessage.filter(session_id=session_id).update(parent_id=None)
        deleted = await ChatSession.filter(id=session_id).delete()
    if not deleted:
        raise NotFound(f"no chat session {session_id}")


async def _update(session_id: int, **values: object) -> None:
    updated = await ChatSession.filter(id=session_id).update(**values, updated_at=utc_now())
    if not updated:
        raise NotFound(f"no chat session {session_id}")


async def list_sessions(
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
) -> SessionPage:
    """Sessions by last activity, newest first, in stable keyset pages (new rows never shift a page).

    `platform` keeps sessions bound to a thread of that platform; `q` keeps sessions whose title
    or any message text contains it, ignoring case (ASCII case only on SQLite); `feedback` keeps
    sessions with an answer rated so; `waiting` keeps sessions with a clarify question or a tool
    approval nobody has answered yet; `channel` keeps sessions bound to a thread of that channel
    (its id, of any workspace); `person` keeps sessions where that user id wrote a message.
    """
    query = session_page_query(status=status, platform=platform, q=q, limit=limit, cursor=cursor,
                               feedback=feedback, waiting=waiting, channel=channel,
                               person=person)
    rows = await query
    more = len(rows) > limit
    rows = rows[:limit]
    next_cursor = encode_cursor(Cursor(rows[-1].last_message_at, rows[-1].id)) if more else None
    return SessionPage(rows, next_cursor)


def session_page_query(
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
) -> QuerySet[ChatSession]:
    """The query of one page of `list_sessions` and one row more (is there a next page?)."""
    if not 1 <= limit <= 200:
        raise InvalidField("limit", "must be between 1 and 200")
    query = ChatSession.all()
    if status is not None:
        query = query.filter(status=status)
    if platform is not None:
        bound = ConversationBinding.filter(platform=platform).values("session_id")
        query = query.filter(id__in=Subquery(bound))
    if q:
        query = query.filter(_mentions(check_text("q", q)))
    if channel:
        bound_to = ConversationBinding.filter(channel=check_text("channel", channel))
        query = query.filter(id__in=Subquery(bound_to.values("session_id")))
    if person:
        wrote = ChatMessage.filter(author=check_text("person", person)).values("session_id")
        query = query.filter(id__in=Subquery(wrote))
    if feedback is not None:
        query = with_feedback(query, feedback)
    if waiting:
        asked = ClarifyPause.filter(status=PauseStatus.UNANSWERED).values("message__session_id")
        query = query.filter(id__in=Subquery(asked))
    if cursor:
        after = _checked_cursor(cursor)
        # The bound on the index's leading column starts the scan at the cursor, however deep;
        # the OR only sorts out the rows that share its time.
        query = query.filter(last_message_at__lte=after.at).filter(
            Q(last_message_at__lt=after.at) | Q(id__lt=after.id)
        )
    return query.order_by("-last_message_at", "-id").limit(limit + 1)


def _mentions(text: str) -> Q:
    # Both sides are bound parameters; tortoise escapes LIKE wildcards in the text. On
    # PostgreSQL each side reads its trigram index (migration 0020); one UNION of the ids keeps
    # the planner from testing every session's title on its way down the activity index.
    titled = ChatSession.filter(title__icontains=text).values("id")
    said = ChatMessage.filter(content__icontains=text).values("session_id")
    return Q(id__in=_Union(Subquery(titled), Subquery(said)))


class _Union(Term):
    """`a UNION b` of two subqueries, inside an `IN (...)`."""

    def __init__(self, *parts: Subquery) -> None:
        super().__init__()
        self.parts = parts

    def get_sql(self, ctx: SqlContext) -> str:
        # Each subquery comes in parentheses, which SQLite refuses around a UNION's operands.
        return "(" + " UNION ".join(_bare(part.get_sql(ctx)) for part in self.parts) + ")"


def _bare(sql: str) -> str:
    return sql[1:-1] if sql.startswith("(") and sql.endswith(")") else sql


def _checked_cursor(token: str) -> Cursor:
    try:
        after = decode_cursor(token)
    except InvalidInput as error:
        raise InvalidField("cursor", error.message) from None
    if after.at.tzinfo is None or not 1 <= after.id <= MAX_ID:
        raise InvalidField("cursor", f"{token!r} is not a cursor this service made")
    return after
