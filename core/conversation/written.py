"""What a person's message gives the agent: its words and the files it carries, read within
the attachment limits (core/chat/attachments.py), and what the thread is told first (the
files skipped and why; that nothing could be read); and the thread's earlier messages that go
with it as context (THREAD_CONTEXT_MESSAGES, core/chat/thread_context.py). Both adapters read a
message so.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from core.chat import attachments, thread_context
from core.chat.attachments import FileOffer, FileReader, StoredFile
from core.chat.thread_context import EarlierMessage
from core.conversation.refusals import NO_WORDS
from core.store.models import ChatMessage, Role

log = logging.getLogger(__name__)
Reader = Callable[[int], Awaitable[Sequence[EarlierMessage]]]  # at most this many, oldest first


@dataclass(frozen=True, slots=True)
class Written:
    """A message as the agent is given it. `text` is empty when there is nothing to answer
    (no words and no file read); `notices` are said in the thread before the answer."""

    text: str
    files: tuple[StoredFile, ...] = ()
    notices: tuple[str, ...] = ()


async def read(text: str, offers: Sequence[FileOffer], files: FileReader) -> Written:
    """The message's words and files: a file read without words is a turn of its own (its
    text names the files), a skipped one is named in a notice while the words still go."""
    intake = await files.take(offers) if offers else attachments.Intake()
    notices = [n for n in (attachments.skipped_notice(intake.skipped),) if n]
    words = text.strip()
    if not words and intake.files:
        words = attachments.placeholder(intake.files)
    if not words:
        notices.append(NO_WORDS)
    return Written(words if words else "", intake.files, tuple(notices))


async def earlier(session_id: int, limit: int, *, new: bool, thread: Reader | None = None,
                  replied: Reader | None = None) -> tuple[EarlierMessage, ...]:
    """The context a message takes into its session (at most `limit` messages; none when it
    is 0): the thread's earlier messages (`thread`) only when `new` (the thread had no
    session before this message: the bot's first mention there), and the messages it replies
    to (`replied`; after the first turn the one replied to alone). What is a turn of the
    session already, or was given to it as context, is left out. A reader that fails (a
    missing scope, a rate limit, the platform away) is logged and the message goes without
    it."""
    if limit <= 0:
        return ()
    found: list[EarlierMessage] = []
    if thread is not None and new:
        found += await _read(thread, limit, "the thread")
    if replied is not None:
        found += await _read(replied, limit if new else 1, "the replied-to messages")
    known = await _known(session_id, [m.id for m in found if m.id]) if found else set()
    return thread_context.gather((m for m in found if m.id not in known), limit)


async def _known(session_id: int, ids: list[str]) -> set[str]:
    """Which of these platform messages the session has: as a turn, or as context given."""
    users = ChatMessage.filter(session_id=session_id, role=Role.USER)
    known: set[str] = set()
    if ids:
        turns = await users.filter(platform_message_id__in=ids).values_list(
            "platform_message_id", flat=True)
        known.update(str(ident) for ident in turns)
    given = await users.filter(thread_context__isnull=False).values_list(
        "thread_context", flat=True)
    for stored in given:
        known.update(m.id for m in thread_context.from_stored(stored))
    return known


async def _read(reader: Reader, limit: int, what: str) -> list[EarlierMessage]:
    try:
        return list(await reader(limit))
    except Exception as error:  # the platform refused or failed: the message still goes
        log.warning("could not read %s as context: %s: %s", what, type(error).__name__, error)
        return []
