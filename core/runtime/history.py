"""What the agent sees before a run's user message: its ancestors, summaries folded in."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from core import attachment_store, attachments, thread_context
from core.attachments import Part, StoredFile
from core.bridge.types import HistoryMessage
from core.models import ChatMessage, MessageStatus, Role

SUMMARY_PREFIX = "Summary of the earlier conversation:\n"


async def conversation_before(user_message: ChatMessage) -> list[tuple[int, HistoryMessage]]:
    """The messages on the path from the root to the parent of `user_message`, with ids.

    Only finished answers count (a failed or stopped attempt is not something the agent
    said). A SYSTEM summary replaces everything before it, as compaction did for the agent.
    Two queries: the session's links, then the rows of the path.
    """
    links = await ChatMessage.filter(session_id=user_message.session_id).values_list(
        "id", "parent_id", "role", "is_active"
    )
    path = _path_with_summaries(links, user_message.parent_id)
    rows = {m.id: m for m in await ChatMessage.filter(id__in=path)} if path else {}
    users = [i for i in path if rows[i].role == Role.USER]
    return fold_history([rows[i] for i in path], await attachment_store.files_of_many(users))


def _path_with_summaries(links: list[tuple], leaf_id: int | None) -> list[int]:
    parent_of = {row[0]: row[1] for row in links}
    summaries: dict[int, list[int]] = defaultdict(list)
    for ident, parent, role, active in sorted(links):
        if role == Role.SYSTEM and active and parent is not None:
            summaries[parent].append(ident)
    ancestors: list[int] = []
    node = leaf_id
    while node is not None:
        ancestors.append(node)
        node = parent_of.get(node)
    path: list[int] = []
    for ident in reversed(ancestors):
        path.append(ident)
        path.extend(summaries.get(ident, []))
    return path


def fold_history(
    messages: list[ChatMessage], files: Mapping[int, Sequence[StoredFile]] | None = None,
) -> list[tuple[int, HistoryMessage]]:
    """Pure: turn path messages into (message id, history entry) pairs; a user message with
    `files` (by message id) has them as content parts."""
    history: list[tuple[int, HistoryMessage]] = []
    files = files or {}
    for message in messages:
        if message.role == Role.SYSTEM:
            history = [(message.id, HistoryMessage("system", SUMMARY_PREFIX + message.content))]
        elif message.role == Role.USER:
            parts = user_content(message, files.get(message.id, ()))
            history.append((message.id, HistoryMessage("user", parts)))
        elif message.status == MessageStatus.SUCCESS and message.content:
            history.append((message.id, HistoryMessage("assistant", message.content)))
    return history


def user_content(message: ChatMessage, files: Sequence[StoredFile]) -> str | list[Part]:
    """Pure: a user message as the model is given it, in its turn and in every later one's
    history: its thread context first (if it has one), then its words and files."""
    context = thread_context.from_stored(message.thread_context)
    return thread_context.with_context(attachments.content(message.content, files), context)
