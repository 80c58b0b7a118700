"""Export a session as Markdown or JSON, streamed in pages: each message
with its logs and the clarify questions its run asked (choices, who answered what).

`prepare_export` checks the request and reads only the tree's links, so a bad id or format
fails before anything is sent; `Export.chunks()` then loads messages and their logs a page at a
time and yields text, so a 10,000-message session is never one string in memory.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime

from core import export_format as fmt
from core import attachment_store, feedback
from core.branch import Node, walk_active, walk_all
from core.errors import InvalidInput
from core.models import (
    ChatMessage, ChatMessageLog, ChatSession, ClarifyPause, ConversationBinding, utc_now,
)
from core.sessions import get_session

FORMATS = {"md": "text/markdown; charset=utf-8", "json": "application/json"}
BRANCHES = ("active", "all")
PAGE = 200


@dataclass(frozen=True, slots=True)
class Export:
    session: ChatSession
    bindings: list[ConversationBinding]
    format: str
    ids: list[int]
    context: fmt.ExportContext
    now: datetime

    @property
    def media_type(self) -> str:
        return FORMATS[self.format]

    @property
    def filename(self) -> str:
        return export_filename(self.session.title, self.format)

    async def chunks(self) -> AsyncIterator[str]:
        """The export's text, a page of messages at a time."""
        renderer = _markdown if self.format == "md" else _json
        async for chunk in renderer(self):
            yield chunk


async def prepare_export(
    session_id: int, format: str = "md", branch: str = "active", now: datetime | None = None
) -> Export:
    """Validate an export request and read the order of its messages."""
    if format not in FORMATS:
        raise InvalidInput(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
    if branch not in BRANCHES:
        raise InvalidInput(f"branch must be one of {', '.join(BRANCHES)}, not {branch!r}")
    session = await get_session(session_id)
    bindings = await ConversationBinding.filter(session_id=session_id).order_by("id")
    rows = await ChatMessage.filter(session_id=session_id).values_list(
        "id", "parent_id", "role", "is_active", "branch_order"
    )
    nodes = [Node(*row) for row in rows]
    active = [n.id for n in walk_active(nodes)]
    ids = active if branch == "active" else [n.id for n in walk_all(nodes)]
    context = fmt.ExportContext(branch, frozenset(active), _sibling_positions(nodes))
    return Export(session, bindings, format, ids, context, now or utc_now())


def _sibling_positions(nodes: list[Node]) -> dict[int, tuple[int, int]]:
    groups: dict[int | None, list[Node]] = defaultdict(list)
    for node in nodes:
        if node.role != "SYSTEM":
            groups[node.parent_id].append(node)
    positions = {}
    for group in groups.values():
        group.sort(key=lambda n: (n.branch_order, n.id))
        positions.update({n.id: (k, len(group)) for k, n in enumerate(group, start=1)})
    return positions


async def _pages(export: Export) -> AsyncIterator[list[fmt.Turn]]:
    for start in range(0, len(export.ids), PAGE):
        page_ids = export.ids[start : start + PAGE]
        rows = {m.id: m for m in await ChatMessage.filter(id__in=page_ids)}
        logs: dict[int, list[ChatMessageLog]] = defaultdict(list)
        for log in await ChatMessageLog.filter(message_id__in=page_ids).order_by("message_id", "seq"):
            logs[log.message_id].append(log)
        pauses: dict[int, list[ClarifyPause]] = defaultdict(list)
        asked = ClarifyPause.filter(message_id__in=page_ids).order_by("created_at", "id")
        for pause in await asked:
            pauses[pause.message_id].append(pause)
        rated = await feedback.of_messages(page_ids)
        files = await attachment_store.listing(page_ids)
        yield [fmt.Turn(rows[i], logs[i], pauses[i], rated.get(i, []), files.get(i, []))
               for i in page_ids if i in rows]


async def _markdown(export: Export) -> AsyncIterator[str]:
    yield fmt.md_header(export.session, export.bindings, len(export.ids), export.context)
    async for page in _pages(export):
        yield "".join(fmt.md_message(turn, export.context) for turn in page)


async def _json(export: Export) -> AsyncIterator[str]:
    head = fmt.json_session(export.session, export.bindings, export.context.branch, export.now)
    yield '{"session": ' + json.dumps(head, ensure_ascii=False) + ', "messages": ['
    first = True
    async for page in _pages(export):
        for turn in page:
            item = json.dumps(fmt.json_message(turn), ensure_ascii=False)
            yield ("\n" if first else ",\n") + item
            first = False
    yield "\n]}\n"


def export_filename(title: str | None, format: str) -> str:
    """A file name safe in any header or file system: ASCII letters, digits, dashes."""
    ascii_title = unicodedata.normalize("NFKD", title or "").encode("ascii", "ignore").decode()
    slug = re.sub(r"[^A-Za-z0-9]+", "-", ascii_title).strip("-").lower()[:60]
    return f"{slug or 'conversation'}.{format}"
