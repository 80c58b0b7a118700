"""Builders and checks shared by the tree, session and export tests."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from tortoise import connections

from core.chat import tree
from core.store.models import ChatMessage, MessageStatus, Role


async def user_turn(session_id: int, text: str) -> ChatMessage:
    return await tree.append_user(session_id, text)


async def answer(
    session_id: int, user: ChatMessage, text: str, status=MessageStatus.SUCCESS, **fields: object
):
    msg = await tree.append_assistant(session_id, user.id, run_id=f"run-{user.id}", **fields)
    await finish(msg, text, status)
    return msg


async def finish(message: ChatMessage, text: str, status=MessageStatus.SUCCESS) -> None:
    error = "model answered garbage" if status == MessageStatus.FAILED else None
    await ChatMessage.filter(id=message.id).update(content=text, status=status, error=error)


async def shape(session_id: int) -> dict[int, tuple[int | None, str, bool, int]]:
    """Every node of the session: id -> (parent_id, role, is_active, branch_order)."""
    rows = await ChatMessage.filter(session_id=session_id).order_by("id").values_list(
        "id", "parent_id", "role", "is_active", "branch_order"
    )
    return {r[0]: (r[1], str(r[2]), bool(r[3]), r[4]) for r in rows}


def check_invariants(nodes: dict[int, tuple[int | None, str, bool, int]], branch: list[int]) -> None:
    """One active non-SYSTEM child per parent, the versions numbered 0, 1, ... as they came;
    the branch is a root-to-leaf path of active nodes."""
    kids: dict[int | None, list[int]] = defaultdict(list)
    for ident, (parent, role, _, _) in nodes.items():
        if role != Role.SYSTEM:
            kids[parent].append(ident)
    for parent, children in kids.items():
        active = [c for c in children if nodes[c][2]]
        assert len(active) == 1, f"parent {parent} has active children {active} of {children}"
        orders = [nodes[c][3] for c in sorted(children)]
        assert orders == list(range(len(children))), f"versions of {parent}: {orders}"
    path = [i for i in branch if nodes[i][1] != Role.SYSTEM]
    assert (path == []) == (nodes == {} or not kids)
    previous: int | None = None
    for ident in path:
        assert nodes[ident][0] == previous, f"{ident} does not follow {previous}"
        assert nodes[ident][2], f"{ident} on the branch is inactive"
        previous = ident
    assert previous is None or not kids.get(previous), "the branch stops before a leaf"


@asynccontextmanager
async def counted_queries() -> AsyncIterator[list[str]]:
    """Record every SQL statement the default connection runs inside the block."""
    client = connections.get("default")
    seen: list[str] = []
    originals: dict[str, Callable[..., Any]] = {}
    for name in ("execute_query", "execute_query_dict", "execute_insert", "execute_many"):
        original = getattr(client, name)
        originals[name] = original

        def wrapper(query: str, *args: Any, _original=original, **kwargs: Any):
            seen.append(query)
            return _original(query, *args, **kwargs)

        setattr(client, name, wrapper)
    try:
        yield seen
    finally:
        for name, original in originals.items():
            setattr(client, name, original)
