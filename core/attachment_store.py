"""The files of user messages in the database (`attachment`): stored with a message, copied to
an edit's new version, read back for the agent, listed for the admin API and exports.

The bytes live in the database rather than under the data directory: every replica reads the
same rows, and a session's delete removes its files in the same cascade as its messages.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from core.attachments import StoredFile, kept, media_type
from core.errors import NotFound
from core.models import Attachment, ChatMessage

_LISTED = ("id", "message_id", "name", "mime_type", "size", "sha256")


@dataclass(frozen=True, slots=True)
class AttachmentInfo:
    """What the admin API and exports show of a file (never its bytes)."""

    id: int
    name: str
    mime_type: str
    size: int
    sha256: str


async def save(message_id: int, files: Sequence[StoredFile]) -> None:
    """Store a user message's files, in their order: a type fit for a header (`media_type`),
    what is kept of a text (`kept`), whoever built them."""
    if not files:
        return
    await Attachment.bulk_create([
        Attachment(message_id=message_id, position=index, name=f.name,
                   mime_type=media_type(f.mime_type), size=f.size, sha256=f.sha256, data=f.data,
                   text=None if f.text is None else kept(f.text))
        for index, f in enumerate(files)
    ])


async def copy(from_message_id: int, to_message_id: int) -> None:
    """An edit's new version of a message keeps the files of the version it replaces."""
    await save(to_message_id, await files_of(from_message_id))


async def files_of(message_id: int) -> list[StoredFile]:
    """A message's files, in order, as the agent is given them."""
    return (await files_of_many([message_id])).get(message_id, [])


async def files_of_many(message_ids: Iterable[int]) -> dict[int, list[StoredFile]]:
    """The files of several messages, by message id (messages without files are absent)."""
    ids = list(message_ids)
    found: dict[int, list[StoredFile]] = defaultdict(list)
    if not ids:
        return found
    rows = await Attachment.filter(message_id__in=ids).order_by("message_id", "position", "id")
    for row in rows:
        found[row.message_id].append(
            StoredFile(row.name, row.mime_type, bytes(row.data), row.text))
    return found


async def listing(message_ids: Iterable[int]) -> dict[int, list[AttachmentInfo]]:
    """What is shown of the files of these messages, by message id."""
    ids = list(message_ids)
    found: dict[int, list[AttachmentInfo]] = defaultdict(list)
    if not ids:
        return found
    rows = await Attachment.filter(message_id__in=ids).order_by(
        "message_id", "position", "id").values_list(*_LISTED)
    for ident, message_id, name, mime_type, size, sha256 in rows:  # a type stored before
        found[message_id].append(AttachmentInfo(ident, name, media_type(mime_type), size, sha256))
    return found


async def download(session_id: int, attachment_id: int) -> tuple[AttachmentInfo, bytes]:
    """One file of a session's messages, with its bytes; NotFound if the session has none
    with that id."""
    row = await Attachment.get_or_none(id=attachment_id)
    if row is None or not await ChatMessage.filter(id=row.message_id,
                                                   session_id=session_id).exists():
        raise NotFound(f"no attachment {attachment_id} in session {session_id}")
    info = AttachmentInfo(row.id, row.name, media_type(row.mime_type), row.size, row.sha256)
    return info, bytes(row.data)
