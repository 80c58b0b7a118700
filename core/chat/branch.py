"""Pure walks over the links of a message tree: the active branch, and the whole tree in order."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import NamedTuple

from core.store.models import Role


class Node(NamedTuple):
    """The few columns a walk needs; loading only these keeps a 10,000-node walk cheap."""

    id: int
    parent_id: int | None
    role: str
    is_active: bool
    branch_order: int


def _children(nodes: Iterable[Node]) -> dict[int | None, list[Node]]:
    children: dict[int | None, list[Node]] = defaultdict(list)
    for node in nodes:
        children[node.parent_id].append(node)
    for siblings in children.values():
        siblings.sort(key=lambda n: (n.role != Role.SYSTEM, n.branch_order, n.id))
    return children


def walk_active(nodes: Iterable[Node]) -> list[Node]:
    """Root to leaf, taking the active child at each level; a node's summaries follow it."""
    children = _children(n for n in nodes if n.is_active)
    branch: list[Node] = []
    current = _active_child(children[None])
    while current is not None:
        branch.append(current)
        kids = children.get(current.id, [])
        branch.extend(k for k in kids if k.role == Role.SYSTEM)
        current = _active_child(kids)
    return branch


def _active_child(siblings: list[Node]) -> Node | None:
    # Exactly one should be active; if a bug ever left two, the newest version wins.
    candidates = [n for n in siblings if n.role != Role.SYSTEM and n.is_active]
    return max(candidates, key=lambda n: (n.branch_order, n.id), default=None)


def walk_all(nodes: Iterable[Node]) -> list[Node]:
    """Every node depth first; summaries right after their parent, then versions by order."""
    children = _children(nodes)
    ordered: list[Node] = []
    stack = list(reversed(children[None]))
    while stack:  # iterative: a branch can be thousands deep
        node = stack.pop()
        ordered.append(node)
        stack.extend(reversed(children.get(node.id, [])))
    return ordered


def active_path(nodes: Iterable[Node]) -> set[int]:
    """Ids on the active branch: what an export of every version marks as current."""
    return {n.id for n in walk_active(nodes)}
