"""The message tree: append, active branch, regenerate, edit, versions, activate.

Invariant: among the non-SYSTEM children of one parent (the roots of a session count as the
children of no parent) exactly one is active. A SYSTEM summary hangs under the message it
follows; it sits in the branch but never counts as a sibling. Nothing is deleted here.
Every mutation locks the session row, so two replicas never interleave their sibling updates.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from tortoise import connections
from tortoise.functions import Max
from tortoise.queryset import QuerySet

from core.chat import attachment_store
from core.chat.branch import Node, walk_active, walk_all
from core.errors import InvalidInput, NotFound
from core.store.models import ChatMessage, ChatSession, MessageStatus, Role, utc_now
from core.store.outage import transaction

CHUNK = 500  # ids per query: far below every backend's limit of bound parameters
_UP_FROM = (  # a branch read upwards from its end, `steps` parents at most
    "WITH RECURSIVE up(id, parent_id, role, is_active, branch_order, n) AS ("
    " SELECT id, parent_id, role, is_active, branch_order, 0 FROM chat_message WHERE id = {leaf}"
    " UNION ALL SELECT m.id, m.parent_id, m.role, m.is_active, m.branch_order, up.n + 1"
    " FROM chat_message m JOIN up ON m.id = up.parent_id WHERE up.n < {steps})"
    " SELECT id, parent_id, role, is_active, branch_order FROM up ORDER BY n")
_LEAVES = (
    "SELECT s.id, s.leaf_id, s.leaf_mark, (SELECT max(m.id) FROM chat_message m"
    " WHERE m.session_id = s.id AND m.is_active AND m.role <> 'SYSTEM')"
    " FROM chat_session s WHERE s.id IN ({})")
_ACTIVE_LINKS = ("SELECT session_id, id, parent_id, role, is_active, branch_order FROM chat_message"
                 " WHERE is_active AND session_id IN ({})")


async def active_branch(session_id: int) -> list[ChatMessage]:
    """The messages of the active branch, root to leaf (summaries included), in one query."""
    rows = {m.id: m for m in await ChatMessage.filter(session_id=session_id, is_active=True)}
    nodes = [Node(m.id, m.parent_id, m.role, m.is_active, m.branch_order) for m in rows.values()]
    return [rows[node.id] for node in walk_active(nodes)]


async def active_branch_ids(session_id: int) -> list[int]:
    """Ids of the active branch, root to leaf, read in one query of the active nodes' links."""
    return [node.id for node in walk_active(await _active_nodes(session_id))]


async def branch_tail(session_id: int, limit: int) -> tuple[list[int], bool] | None:
    """The last `limit` ids of the active branch (summaries included) and whether earlier ones
    exist, read from where it ends up its parents (`limit` + 1 steps), not the whole branch: a
    page of a 10,000-message conversation reads ~40 rows. None when a step up finds an inactive
    node (where it ends was not written down as it is: read the whole branch instead)."""
    leaf = (await leaf_ids([session_id])).get(session_id)
    if leaf is None:
        return [], False
    connection = connections.get("default")
    _, rows = await connection.execute_query(_UP_FROM.format(leaf=int(leaf), steps=int(limit)))
    path = [Node(*tuple(row)) for row in rows]
    if not path or not all(node.is_active for node in path):
        return None
    summaries: dict[int, list[Node]] = {}
    for row in await ChatMessage.filter(
            parent_id__in=[n.id for n in path], role=Role.SYSTEM, is_active=True).values_list(
            "id", "parent_id", "role", "is_active", "branch_order"):
        summaries.setdefault(row[1], []).append(Node(*row))
    ids: list[int] = []
    for node in reversed(path):
        ids.append(node.id)
        ids += [n.id for n in sorted(summaries.get(node.id, []),
                                     key=lambda n: (n.branch_order, n.id))]
    from_root = path[-1].parent_id is None
    return ids[-limit:], len(ids) > limit or not from_root


async def leaf_ids(session_ids: Sequence[int]) -> dict[int, int | None]:
    """Where each session's active branch ends (its last message but summaries; None: no
    message): the newest active message unless a version switch or a fresh start came after
    it, which wrote down where the branch ended then (`ChatSession.leaf_id`, `leaf_mark`).
    One query; each newest message is one look into an index (migration 0020)."""
    rows = await _rows_of_sessions(_LEAVES, session_ids)
    return {sid: newest if newest and newest > (mark or 0) else leaf
            for sid, leaf, mark, newest in rows}


async def _mark_leaf(session_id: int, leaf: int | None) -> None:
    """Write down where the branch ends now (a version switch, a fresh start): every message
    made after this one ends it in turn, with no write of its own."""
    newest = await ChatMessage.filter(session_id=session_id).annotate(
        newest=Max("id")).values_list("newest", flat=True)
    await ChatSession.filter(id=session_id).update(leaf_id=leaf, leaf_mark=newest[0] or 0)


async def tree_order_ids(session_id: int) -> list[int]:
    """Every message id of the session, depth first, siblings by branch order."""
    rows = await ChatMessage.filter(session_id=session_id).values_list(
        "id", "parent_id", "role", "is_active", "branch_order"
    )
    return [node.id for node in walk_all([Node(*row) for row in rows])]


async def _active_nodes(session_id: int) -> list[Node]:
    return (await active_links([session_id])).get(session_id, [])


async def active_links(session_ids: Sequence[int]) -> dict[int, list[Node]]:
    """The links of the active nodes of these sessions, by session. Read as plain rows (the
    ORM's conversion of each value cost more than the query: ~100 ms for 10,000 nodes)."""
    found: dict[int, list[Node]] = {}
    for session_id, *link in await _rows_of_sessions(_ACTIVE_LINKS, session_ids):
        found.setdefault(session_id, []).append(Node(*link))
    return found


async def _rows_of_sessions(sql: str, session_ids: Sequence[int]) -> list[tuple[Any, ...]]:
    """The rows of `sql`, whose `{}` is the placeholders of the ids, a CHUNK of ids a query."""
    connection = connections.get("default")
    postgres = connection.capabilities.dialect == "postgres"
    found: list[tuple[Any, ...]] = []
    for start in range(0, len(session_ids), CHUNK):
        chunk = list(session_ids[start : start + CHUNK])
        marks = ", ".join(f"${i}" if postgres else "?" for i in range(1, len(chunk) + 1))
        _, rows = await connection.execute_query(sql.format(marks), chunk)
        found += [tuple(row) for row in rows]
    return found


async def leaf(session_id: int) -> ChatMessage | None:
    """The last non-SYSTEM message of the active branch: where the next user message attaches."""
    last = await _leaf_id(session_id)
    return await ChatMessage.get(id=last) if last is not None else None


async def _leaf_id(session_id: int) -> int | None:
    return _leaf_of(await _active_nodes(session_id))


def _leaf_of(active: list[Node]) -> int | None:
    nodes = walk_active(active)
    return next((n.id for n in reversed(nodes) if n.role != Role.SYSTEM), None)


def question_of(answer: ChatMessage) -> int:
    """The id of the user message an assistant message answers (NotFound for a root)."""
    if answer.parent_id is None:
        raise NotFound(f"message {answer.id} answers no question")
    return answer.parent_id


async def get_message(message_id: int, session_id: int | None = None) -> ChatMessage:
    """The message with this id; NotFound if missing, InvalidInput if of another session."""
    message = await ChatMessage.get_or_none(id=message_id)
    if message is None:
        raise NotFound(f"no message {message_id}")
    if session_id is not None and message.session_id != session_id:
        raise InvalidInput(f"message {message_id} does not belong to session {session_id}")
    return message


async def add_child(
    session_id: int, parent_id: int | None, role: Role, status: MessageStatus, **fields: Any
) -> ChatMessage:
    """Insert an active child under `parent_id` (None: a root), deactivating its siblings;
    the parent's path becomes the active branch, so the new node always shows."""
    async with transaction():
        await _lock_session(session_id)
        if parent_id is not None:
            await get_message(parent_id, session_id)
            await _activate_path(session_id, parent_id)
        return await _insert_sibling(session_id, parent_id, role, status, **fields)


async def append_user(session_id: int, text: str, **fields: Any) -> ChatMessage:
    """A new user message at the end of the active branch."""
    _require_text(text)
    async with transaction():
        await _lock_session(session_id)
        parent = await leaf(session_id)
        return await _insert_sibling(
            session_id, parent.id if parent else None, Role.USER, MessageStatus.SENT,
            content=text, **fields,
        )


async def append_turn_locked(
    session_id: int, text: str, status: MessageStatus, user_fields: dict[str, Any],
    answer_fields: dict[str, Any],
) -> tuple[ChatMessage, ChatMessage]:
    """A user message at the end of the active branch and, under it, the assistant message that
    will answer it. For a caller that holds the session row's lock in its open transaction (a
    run's start does): a new node has no siblings and is on the active branch already, so the
    answer is inserted as it is, without the checks `add_child` makes of an arbitrary parent.

    The user message's siblings (the leaf's other children) are all inactive, or the active
    branch would go on through one of them, so none is deactivated; in an empty tree (no active
    node: every group of siblings has one) it is the first root, and no sibling is looked for."""
    _require_text(text)
    active = await _active_nodes(session_id)
    parent = _leaf_of(active)
    order = 0 if not active else await _next_order(_siblings(session_id, parent))
    user = await ChatMessage.create(
        session_id=session_id, parent_id=parent, role=Role.USER, status=MessageStatus.SENT,
        is_active=True, branch_order=order, created_at=utc_now(), content=text, **user_fields,
    )
    answer = await ChatMessage.create(
        session_id=session_id, parent_id=user.id, role=Role.ASSISTANT, status=status,
        is_active=True, branch_order=0, created_at=utc_now(), **answer_fields,
    )
    return user, answer


async def append_assistant(
    session_id: int, user_message_id: int, status: MessageStatus = MessageStatus.RUNNING,
    **fields: Any,
) -> ChatMessage:
    """The assistant answer to a user message (RUNNING with its run_id, usually)."""
    user = await get_message(user_message_id, session_id)
    if user.role != Role.USER:
        raise InvalidInput(f"message {user_message_id} is not a user message")
    return await add_child(session_id, user.id, Role.ASSISTANT, status, **fields)


async def add_summary(session_id: int, after_message_id: int, summary: str) -> ChatMessage:
    """A SYSTEM/SUMMARY node under the message it follows; it never becomes a sibling."""
    await get_message(after_message_id, session_id)
    return await ChatMessage.create(
        session_id=session_id, parent_id=after_message_id, role=Role.SYSTEM,
        status=MessageStatus.SUMMARY, content=summary, is_active=True,
    )


STEER = "steer"  # a user message's kind: guidance given to a running turn


async def add_steer(session_id: int, answer_id: int, text: str, **fields: Any) -> ChatMessage:
    """A person's guidance to the running turn of `answer_id`: a user message of kind steer
    under that answer, never a version and never on the active branch (the agent read it
    inside that turn, at its next step)."""
    return await ChatMessage.create(
        session_id=session_id, parent_id=answer_id, role=Role.USER, status=MessageStatus.SENT,
        content=text, is_active=False, kind=STEER, created_at=utc_now(), **fields)


async def regenerate(
    message_id: int, session_id: int | None = None,
    status: MessageStatus = MessageStatus.RUNNING, **fields: Any,
) -> ChatMessage:
    """A new assistant sibling of an assistant message; it becomes the active version."""
    old = await get_message(message_id, session_id)
    if old.role != Role.ASSISTANT:
        raise InvalidInput(f"only an assistant message can be regenerated; {message_id} is {old.role}")
    fields.setdefault("model_id", old.model_id)
    fields.setdefault("skill_folder", old.skill_folder)
    return await add_child(old.session_id, old.parent_id, Role.ASSISTANT, status, **fields)


async def edit(
    message_id: int, text: str, session_id: int | None = None, **fields: Any
) -> ChatMessage:
    """A new user sibling with the edited text and the files and thread context of the old
    one; no run starts here."""
    _require_text(text)
    old = await get_message(message_id, session_id)
    if old.role != Role.USER:
        raise InvalidInput(f"only a user message can be edited; {message_id} is {old.role}")
    fields.setdefault("thread_context", old.thread_context)
    async with transaction():
        new = await add_child(
            old.session_id, old.parent_id, Role.USER, MessageStatus.SENT, content=text, **fields
        )
        await attachment_store.copy(old.id, new.id)
    return new


async def versions(message_id: int, session_id: int | None = None) -> list[ChatMessage]:
    """The message and its siblings (same parent, same session, not SYSTEM) by branch order."""
    message = await get_message(message_id, session_id)
    if message.role == Role.SYSTEM:
        return [message]
    return await _siblings(message.session_id, message.parent_id).order_by("branch_order", "id")


async def sibling_ids(session_id: int, messages: Sequence[ChatMessage]) -> dict[int, list[int]]:
    """For each of these messages of the session (not SYSTEM), the ids of its versions in
    branch order, itself included: a query per CHUNK parents, and one for the roots."""
    wanted = [m for m in messages if m.role != Role.SYSTEM]
    parents = sorted({m.parent_id for m in wanted if m.parent_id is not None})
    query = ChatMessage.filter(session_id=session_id, kind__isnull=True) \
        .exclude(role=Role.SYSTEM).order_by("branch_order", "id")
    rows: list[tuple[int, int | None]] = []
    for start in range(0, len(parents), CHUNK):
        chunk = parents[start : start + CHUNK]
        rows += await query.filter(parent_id__in=chunk).values_list("id", "parent_id")
    if any(m.parent_id is None for m in wanted):
        rows += await query.filter(parent_id__isnull=True).values_list("id", "parent_id")
    by_parent: dict[int | None, list[int]] = {}
    for message_id, parent_id in rows:
        by_parent.setdefault(parent_id, []).append(message_id)
    return {m.id: by_parent.get(m.parent_id, [m.id]) for m in wanted}


async def activate(message_id: int, session_id: int | None = None) -> ChatMessage:
    """Make this version the active one among its siblings (and its ancestors, so it shows)."""
    message = await get_message(message_id, session_id)
    if message.role == Role.SYSTEM:
        raise InvalidInput(f"message {message_id} is a summary, not a version")
    async with transaction():
        await _lock_session(message.session_id)
        await _activate_path(message.session_id, message.id)
        await _mark_leaf(message.session_id, _leaf_of(await _active_nodes(message.session_id)))
    message.is_active = True
    return message


async def set_aside(session_id: int) -> None:
    """The conversation starts afresh (a reset's): the root of the active branch becomes an
    inactive version, so the next message starts a new root beside it and the old conversation
    stays whole, one version switch away. For a caller holding the session row's lock."""
    await ChatMessage.filter(session_id=session_id, parent_id__isnull=True).update(
        is_active=False)
    await _mark_leaf(session_id, None)


async def _activate_path(session_id: int, message_id: int) -> None:
    """Make the message and each of its ancestors the active version, so it shows."""
    links = dict(await ChatMessage.filter(session_id=session_id).values_list("id", "parent_id"))
    active = set(await ChatMessage.filter(session_id=session_id, is_active=True).values_list(
        "id", flat=True))
    node: int | None = message_id
    while node is not None:
        if node not in active:
            await _siblings(session_id, links[node]).update(is_active=False)
            await ChatMessage.filter(id=node).update(is_active=True)
        node = links[node]


def _siblings(session_id: int, parent_id: int | None) -> QuerySet[ChatMessage]:
    """The versions under a parent: neither summaries nor guidance (`kind` steer)."""
    query = ChatMessage.filter(session_id=session_id, kind__isnull=True).exclude(role=Role.SYSTEM)
    if parent_id is None:
        return query.filter(parent_id__isnull=True)
    return query.filter(parent_id=parent_id)


async def _insert_sibling(
    session_id: int, parent_id: int | None, role: Role, status: MessageStatus, **fields: Any
) -> ChatMessage:
    siblings = _siblings(session_id, parent_id)
    order = await _next_order(siblings)
    await siblings.filter(is_active=True).update(is_active=False)
    return await ChatMessage.create(
        session_id=session_id, parent_id=parent_id, role=role, status=status, is_active=True,
        branch_order=order, created_at=utc_now(), **fields,
    )


async def _next_order(siblings: QuerySet[ChatMessage]) -> int:
    """The branch order of a new version among `siblings`."""
    orders = cast(list[int], await siblings.values_list("branch_order", flat=True))
    return max(orders, default=-1) + 1


async def _lock_session(session_id: int) -> None:
    if await ChatSession.select_for_update().get_or_none(id=session_id) is None:
        raise NotFound(f"no chat session {session_id}")


def _require_text(text: str) -> None:
    if not text or not text.strip():
        raise InvalidInput("a message cannot be empty")
