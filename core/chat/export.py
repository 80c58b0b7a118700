"""Export a session as Markdown or JSON, streamed in pages: each message
with its logs, the clarify questions its run asked (choices, who answered what) and what its
model calls spent, and the session's total spend.

`prepare_export` checks the request (a bad id or format fails before anything is sent);
`Export.chunks()` then reads the tree's links and loads messages and their logs a page at a
time, all on one snapshot of the database (core/store/snapshot.py), and yields text: a
10,000-message session is never one string in memory, and what it says is whole as of the
snapshot, however the session changes or is deleted while the download goes on.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import defaultdict
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass
from datetime import datetime

from tortoise.backends.base.client import BaseDBAsyncClient

from core.chat import export_format as fmt
from core.chat import attachment_store, feedback
from core.agent.thinking import UsageTotals
from core.chat.branch import Node, walk_active, walk_all
from core.errors import InvalidInput, NotFound
from core.store.models import (
    ChatMessage, ChatMessageLog, ChatSession, ClarifyPause, ConversationBinding, utc_now,
)
from core.chat.sessions import get_session
from core.store.snapshot import read_snapshot
from core.usage import reports

FORMATS = {"md": "text/markdown; charset=utf-8", "json": "application/json"}
BRANCHES = ("active", "all")
PAGE = 200


@dataclass(frozen=True, slots=True)
class Export:
    session: ChatSession
    format: str
    branch: str
    now: datetime

    @property
    def media_type(self) -> str:
        return FORMATS[self.format]

    @property
    def filename(self) -> str:
        return export_filename(self.session.title, self.format)

    async def chunks(self) -> AsyncIterator[str]:
        """The export's text, a page of messages at a time, from one snapshot (a session
        deleted since `prepare_export` ends it with NotFound before any text)."""
        renderer = _markdown if self.format == "md" else _json
        async with read_snapshot() as db:
            plan = await _plan(db, self.session.id, self.branch)
            # a download abandoned midway closes its generators here, not when they are collected
            async with aclosing(renderer(db, plan, self.now)) as text:
                async for chunk in text:
                    yield chunk


@dataclass(frozen=True, slots=True)
class _Plan:
    """What the snapshot holds of the session: its row, its bindings, the messages' order."""

    session: ChatSession
    bindings: list[ConversationBinding]
    ids: list[int]
    context: fmt.ExportContext
    usage: UsageTotals  # what every run of the session spent


async def prepare_export(
    session_id: int, format: str = "md", branch: str = "active", now: datetime | None = None
) -> Export:
    """Validate an export request: InvalidInput for a bad format or branch, NotFound for a
    session that does not exist."""
    if format not in FORMATS:
        raise InvalidInput(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
    if branch not in BRANCHES:
        raise InvalidInput(f"branch must be one of {', '.join(BRANCHES)}, not {branch!r}")
    return Export(await get_session(session_id), format, branch, now or utc_now())


async def _plan(db: BaseDBAsyncClient, session_id: int, branch: str) -> _Plan:
    session = await ChatSession.filter(id=session_id).using_db(db).first()
    if session is None:
        raise NotFound(f"no chat session {session_id}")
    bindings = await ConversationBinding.filter(session_id=session_id).using_db(db).order_by("id")
    rows = await ChatMessage.filter(session_id=session_id).using_db(db).values_list(
        "id", "parent_id", "role", "is_active", "branch_order"
    )
    nodes = [Node(*row) for row in rows]
    active = [n.id for n in walk_active(nodes)]
    ids = active if branch == "active" else [n.id for n in walk_all(nodes)]
    context = fmt.ExportContext(branch, frozenset(active), _sibling_positions(nodes))
    return _Plan(session, bindings, ids, context, await reports.of_session(session_id, db))


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


async def _pages(db: BaseDBAsyncClient, ids: list[int]) -> AsyncGenerator[list[fmt.Turn], None]:
    for start in range(0, len(ids), PAGE):
        page_ids = ids[start : start + PAGE]
        rows = {m.id: m for m in await ChatMessage.filter(id__in=page_ids).using_db(db)}
        logs: dict[int, list[ChatMessageLog]] = defaultdict(list)
        for log in await ChatMessageLog.filter(message_id__in=page_ids).using_db(db).order_by(
                "message_id", "seq"):
            logs[log.message_id].append(log)
        pauses: dict[int, list[ClarifyPause]] = defaultdict(list)
        asked = ClarifyPause.filter(message_id__in=page_ids).using_db(db).order_by("created_at", "id")
        for pause in await asked:
            pauses[pause.message_id].append(pause)
        rated = await feedback.of_messages(page_ids, db)
        files = await attachment_store.listing(page_ids, db)
        spent = await reports.of_messages(page_ids, db)
        yield [fmt.Turn(rows[i], logs[i], pauses[i], rated.get(i, []), files.get(i, []),
                        spent.get(i, UsageTotals()))
               for i in page_ids if i in rows]


async def _markdown(db: BaseDBAsyncClient, plan: _Plan, now: datetime) -> AsyncGenerator[str, None]:
    yield fmt.md_header(plan.session, plan.bindings, len(plan.ids), plan.context, plan.usage)
    async with aclosing(_pages(db, plan.ids)) as pages:
        async for page in pages:
            yield "".join(fmt.md_message(turn, plan.context) for turn in page)


async def _json(db: BaseDBAsyncClient, plan: _Plan, now: datetime) -> AsyncGenerator[str, None]:
    head = fmt.json_session(plan.session, plan.bindings, plan.context.branch, now, plan.usage)
    yield '{"session": ' + json.dumps(head, ensure_ascii=False) + ', "messages": ['
    first = True
    async with aclosing(_pages(db, plan.ids)) as pages:
        async for page in pages:
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
