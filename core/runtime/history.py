"""What the agent sees before a run's user message: its ancestors, summaries folded in, and
the files of the earlier user messages within HISTORY_ATTACHMENT_BYTES (docs/attachments.md).

Every turn's request carries the whole history again, so the earlier files are given newest
first while they fit in the budget; one that does not fit is named in its message instead. A
text file or a PDF is given as its stored text: its bytes are never read for a request.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from core.agent.bridge.types import HistoryMessage
from core.chat import attachment_store, attachments, thread_context
from core.chat.attachment_store import AgentFile
from core.chat.attachments import HISTORY_ATTACHMENT_BYTES, GivenFile, Part
from core.store.models import ChatMessage, MessageStatus, Role

SUMMARY_PREFIX = "Summary of the earlier conversation:\n"


@dataclass(frozen=True, slots=True)
class MessageFiles:
    """A user message's files in a request: those given, and those named in their place."""

    given: Sequence[GivenFile] = ()
    left_out: Sequence[AgentFile] = ()


NO_FILES = MessageFiles()


async def conversation_before(
    user_message: ChatMessage, file_budget: int = HISTORY_ATTACHMENT_BYTES,
) -> list[tuple[int, HistoryMessage]]:
    """The messages on the path from the root to the parent of `user_message`, with ids, and
    their files within `file_budget` bytes.

    Only finished answers count (a failed or stopped attempt is not something the agent
    said). A SYSTEM summary replaces everything before it, as compaction did for the agent.
    Four queries: the session's links, the rows of the path, the columns but the bytes of the
    files of the user messages since the last summary, the bytes of the images given.
    """
    links = await ChatMessage.filter(session_id=user_message.session_id).values_list(
        "id", "parent_id", "role", "is_active"
    )
    path = _path_with_summaries(links, user_message.parent_id)
    rows = {m.id: m for m in await ChatMessage.filter(id__in=path)} if path else {}
    messages = [rows[i] for i in path]
    users = [m.id for m in since_summary(messages) if m.role == Role.USER]
    return fold_history(messages, await files_within(users, file_budget))


async def files_within(message_ids: Sequence[int], budget: int | None) -> dict[int, MessageFiles]:
    """The files of these user messages (oldest first) as a request gives them, by message id:
    the newest first while they fit in `budget` bytes (None: every one)."""
    found = await attachment_store.agent_files(message_ids)
    newest_first = [f for ident in reversed(message_ids) for f in found.get(ident, ())]
    kept = within_budget(newest_first, budget)
    loaded = await attachment_store.with_image_data([f for f in newest_first if f.id in kept])
    by_id = {f.id: f for f in loaded}
    return {ident: MessageFiles(tuple(by_id[f.id] for f in files if f.id in by_id),
                                tuple(f for f in files if f.id not in kept))
            for ident, files in found.items()}


def within_budget(newest_first: Sequence[AgentFile], budget: int | None) -> set[int]:
    """Pure: the ids of the files given, in this order while each fits in what is left of
    `budget` bytes (a file too big for it leaves room to older, smaller ones)."""
    if budget is None:
        return {f.id for f in newest_first}
    kept: set[int] = set()
    for file in newest_first:
        cost = given_bytes(file)
        if cost <= budget:
            kept.add(file.id)
            budget -= cost
    return kept


def given_bytes(file: AgentFile) -> int:
    """Pure: what a file counts against the budget: an image's size, a text's UTF-8 bytes as
    the agent is given it (fenced, cut)."""
    if file.text is None:
        return file.size
    return len(attachments.fenced(file.name, file.text).encode("utf-8", "replace"))


def left_out_note(files: Sequence[AgentFile]) -> str:
    """Pure: the words that stand in a message for its files that are not given again."""
    return "\n".join(
        f"[{'image' if f.is_image else 'file'} {f.name} ({attachments.describe_size(f.size)}) "
        "not sent again: the conversation's earlier files are over HISTORY_ATTACHMENT_BYTES]"
        for f in files)


def since_summary(messages: Sequence[ChatMessage]) -> Sequence[ChatMessage]:
    """Pure: the messages from the last SYSTEM summary on (all of them without one): what the
    agent sees, so the files of the others are not even read."""
    starts = [n for n, m in enumerate(messages) if m.role == Role.SYSTEM]
    return messages[starts[-1]:] if starts else messages


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
    messages: list[ChatMessage], files: Mapping[int, MessageFiles] | None = None,
) -> list[tuple[int, HistoryMessage]]:
    """Pure: turn path messages into (message id, history entry) pairs; a user message with
    `files` (by message id) has them as content parts, and the note of those left out."""
    history: list[tuple[int, HistoryMessage]] = []
    files = files or {}
    for message in messages:
        if message.role == Role.SYSTEM:
            history = [(message.id, HistoryMessage("system", SUMMARY_PREFIX + message.content))]
        elif message.role == Role.USER:
            parts = user_content(message, files.get(message.id, NO_FILES))
            history.append((message.id, HistoryMessage("user", parts)))
        elif message.status == MessageStatus.SUCCESS and message.content:
            history.append((message.id, HistoryMessage("assistant", message.content)))
    return history


def user_content(message: ChatMessage, files: MessageFiles) -> str | list[Part]:
    """Pure: a user message as the model is given it, in its turn and in every later one's
    history: its thread context first (if it has one), then its words (and the note of the
    files left out), then its files."""
    context = thread_context.from_stored(message.thread_context)
    words = "\n\n".join(w for w in (message.content, left_out_note(files.left_out)) if w)
    return thread_context.with_context(attachments.content(words, files.given), context)
