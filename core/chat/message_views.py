"""Read models of messages: the active branch with each assistant message's logs and thinking."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from core.agent.events import LogRecord
from core.agent.thinking import ThinkingState, UsageTotals, replay
from core.chat import attachment_store, feedback, tree
from core.chat.attachment_store import AttachmentInfo
from core.chat.feedback import Feedback
from core.chat.session_queries import SessionSummary, session_summary
from core.chat.sessions import get_session
from core.store.models import ChatMessage, ChatMessageLog, Role
from core.text.field_errors import InvalidField
from core.usage import reports

CHUNK = 500  # ids per query: far below every backend's limit of bound parameters
MAX_PAGE = 200


@dataclass(frozen=True, slots=True)
class MessageView:
    """A message; an assistant message also has its log rows and the state they replay to."""

    message: ChatMessage
    logs: tuple[ChatMessageLog, ...] = ()
    thinking: ThinkingState | None = None
    feedback: tuple[Feedback, ...] = ()
    attachments: tuple[AttachmentInfo, ...] = ()  # a user message's files
    usage: UsageTotals | None = None  # what an assistant message's run spent


@dataclass(frozen=True, slots=True)
class SessionDetail:
    summary: SessionSummary
    messages: list[MessageView]
    usage: UsageTotals = UsageTotals()  # what every run of the session spent, every version


@dataclass(frozen=True, slots=True)
class MessagePage:
    """Messages of the active branch in order, and whether earlier ones exist."""

    messages: list[MessageView]
    has_more: bool


async def session_detail(session_id: int) -> SessionDetail:
    """The session and its whole active branch, root to leaf."""
    summary = await session_summary(session_id)
    messages = await message_views(await tree.active_branch_ids(session_id))
    return SessionDetail(summary, messages, await reports.of_session(session_id))


async def message_page(session_id: int, before: int | None = None, limit: int = 50) -> MessagePage:
    """Up to `limit` messages of the active branch just before message `before` (None: the end)."""
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidField("limit", f"must be between 1 and {MAX_PAGE}")
    await get_session(session_id)
    if before is None and (tail := await tree.branch_tail(session_id, limit)) is not None:
        ids, more = tail
        return MessagePage(await message_views(ids), has_more=more)
    ids = await tree.active_branch_ids(session_id)
    end = len(ids)
    if before is not None:
        if before not in ids:
            raise InvalidField(
                "before", f"message {before} is not on the active branch of session {session_id}"
            )
        end = ids.index(before)
    start = max(0, end - limit)
    return MessagePage(await message_views(ids[start:end]), has_more=start > 0)


async def message_views(ids: Sequence[int]) -> list[MessageView]:
    """The messages with these ids in this order; logs and thinking for assistant ones."""
    rows: dict[int, ChatMessage] = {}
    logs: dict[int, list[ChatMessageLog]] = defaultdict(list)
    rated: dict[int, list[Feedback]] = {}
    files: dict[int, list[AttachmentInfo]] = {}
    spent: dict[int, UsageTotals] = {}
    for start in range(0, len(ids), CHUNK):
        chunk = list(ids[start : start + CHUNK])
        rows.update({m.id: m for m in await ChatMessage.filter(id__in=chunk)})
        users = [i for i in chunk if i in rows and rows[i].role == Role.USER]
        files.update(await attachment_store.listing(users))
        assistants = [i for i in chunk if i in rows and rows[i].role == Role.ASSISTANT]
        if assistants:
            query = ChatMessageLog.filter(message_id__in=assistants).order_by("message_id", "seq")
            for log in await query:
                logs[log.message_id].append(log)
            rated.update(await feedback.of_messages(assistants))
            spent.update(await reports.of_messages(assistants))
    return [_view(rows[i], logs.get(i, []), rated.get(i, []), files.get(i, []), spent.get(i))
            for i in ids if i in rows]


def _view(message: ChatMessage, logs: list[ChatMessageLog], rated: list[Feedback],
          files: list[AttachmentInfo], spent: UsageTotals | None) -> MessageView:
    if message.role != Role.ASSISTANT:
        return MessageView(message, attachments=tuple(files))
    return MessageView(message, tuple(logs), replay(log_record(row) for row in logs), tuple(rated),
                       usage=spent or UsageTotals())


def log_record(row: ChatMessageLog) -> LogRecord:
    """The `LogRecord` of a stored row (what `core.agent.thinking.replay` folds)."""
    return LogRecord(
        seq=row.seq, kind=row.kind, content=row.content, tool_name=row.tool_name,
        meta_json=row.meta_json, created_at=row.created_at,
    )
