"""The files of user messages in the database (`attachment`): stored with a message, copied to
an edit's new version, read back for the agent (a text file's or a PDF's text, never its bytes;
an image's bytes only once it is given), listed for the admin API and exports.

The bytes live in the database rather than under the data directory: every replica reads the
same rows, and a session's delete removes its files in the same cascade as its messages.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from tortoise.backends.base.client import BaseDBAsyncClient

from core.chat.attachments import StoredFile, data_url, kept, media_type
from core.errors import NotFound
from core.store.models import Attachment, ChatMessage

_LISTED = ("id", "message_id", "name", "mime_type", "size", "sha256")
_FOR_AGENT = ("id", "message_id", "name", "mime_type", "size", "text")  # never `data`


@dataclass(frozen=True, slots=True)
class AttachmentInfo:
    """What the admin API and exports show of a file (never its bytes)."""

    id: int
    name: str
    mime_type: str
    size: int
    sha256: str


@dataclass(frozen=True, slots=True)
class AgentFile:
    """A stored file as the agent is given it (core.chat.attachments.GivenFile): a text file's or a
    PDF's text, whose bytes are never read for it; an image as a `data:` URL once
    `with_image_data` has read it (empty until then)."""

    id: int
    name: str
    mime_type: str
    size: int  # of the file as it came
    text: str | None
    url: str = ""  # an image's `data:` URL, once `with_image_data` has read it

    @property
    def is_image(self) -> bool:
        return self.text is None


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
    """A message's files, in order, with their bytes (an edit's copy)."""
    rows = await Attachment.filter(message_id=message_id).order_by("position", "id")
    return [StoredFile(r.name, r.mime_type, bytes(r.data), r.text) for r in rows]


async def agent_files(message_ids: Iterable[int]) -> dict[int, list[AgentFile]]:
    """The files of several messages by message id, in order, as the agent may be given
    them: every column but the bytes (messages without files are absent)."""
    found: dict[int, list[AgentFile]] = defaultdict(list)
    for ident, message_id, name, mime_type, size, text in await _rows(message_ids, _FOR_AGENT):
        found[message_id].append(AgentFile(ident, name, media_type(mime_type), size, text))
    return found


async def with_image_data(files: Sequence[AgentFile]) -> list[AgentFile]:
    """`files` with their images as `data:` URLs, their bytes read in one query (and encoded
    off the event loop); text files as they are, an image deleted meanwhile (with its
    session) left out."""
    ids = [f.id for f in files if f.is_image]
    if not ids:
        return list(files)
    data = dict(await Attachment.filter(id__in=ids).values_list("id", "data"))
    return [f if not f.is_image else replace(f, url=await data_url(f.mime_type, bytes(data[f.id])))
            for f in files if not f.is_image or f.id in data]


async def listing(
    message_ids: Iterable[int], db: BaseDBAsyncClient | None = None
) -> dict[int, list[AttachmentInfo]]:
    """What is shown of the files of these messages, by message id (read on `db`, a
    snapshot, if given)."""
    found: dict[int, list[AttachmentInfo]] = defaultdict(list)
    for ident, message_id, name, mime_type, size, sha256 in await _rows(message_ids, _LISTED, db):
        found[message_id].append(AttachmentInfo(ident, name, media_type(mime_type), size, sha256))
    return found


async def _rows(message_ids: Iterable[int], columns: Sequence[str],
                db: BaseDBAsyncClient | None = None) -> list[tuple[Any, ...]]:
    """These columns of the files of several messages, by message then place (on `db`, a
    snapshot, if given)."""
    ids = list(message_ids)
    if not ids:
        return []
    return await Attachment.filter(message_id__in=ids).using_db(db).order_by(
        "message_id", "position", "id").values_list(*columns)


async def download(session_id: int, attachment_id: int) -> tuple[AttachmentInfo, bytes]:
    """One file of a session's messages, with its bytes; NotFound if the session has none
    with that id."""
    row = await Attachment.get_or_none(id=attachment_id)
    if row is None or not await ChatMessage.filter(id=row.message_id,
                                                   session_id=session_id).exists():
        raise NotFound(f"no attachment {attachment_id} in session {session_id}")
    info = AttachmentInfo(row.id, row.name, media_type(row.mime_type), row.size, row.sha256)
    return info, bytes(row.data)
