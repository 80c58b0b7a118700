"""What a person's message gives the agent: its words and the files it carries, read within
ATTACHMENT_MAX_BYTES and ATTACHMENTS_PER_MESSAGE, and what the thread is told first (the
files skipped and why; that nothing could be read). Both adapters read a message so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core import attachments
from core.attachments import FileOffer, Limits, StoredFile
from core.conversation.refusals import NO_WORDS


@dataclass(frozen=True, slots=True)
class Written:
    """A message as the agent is given it. `text` is empty when there is nothing to answer
    (no words and no file read); `notices` are said in the thread before the answer."""

    text: str
    files: tuple[StoredFile, ...] = ()
    notices: tuple[str, ...] = ()


async def read(text: str, offers: Sequence[FileOffer], limits: Limits) -> Written:
    """The message's words and files: a file read without words is a turn of its own (its
    text names the files), a skipped one is named in a notice while the words still go."""
    intake = await attachments.take(offers, limits) if offers else attachments.Intake()
    notices = [n for n in (attachments.skipped_notice(intake.skipped),) if n]
    words = text.strip()
    if not words and intake.files:
        words = attachments.placeholder(intake.files)
    if not words:
        notices.append(NO_WORDS)
    return Written(words if words else "", intake.files, tuple(notices))
