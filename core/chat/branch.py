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
    """Root to leaf, taking the active child at each level; a node's summaries follow it.

    One pass over the nodes and one down the branch, with no sort of each group of siblings:
    a 10,000-node branch is walked in a few milliseconds."""
    system = Role.SYSTEM.value
    chosen: dict[int | None, Node] = {}  # each parent's active version (the newest, if two)
    summaries: dict[int | None, list[Node]] = {}
    for node in nodes:
        if not node.is_active:
            continue
        if node.role == system:
            summaries.setdefault(node.parent_id, []).append(node)
            continue
        best = chosen.get(node.parent_id)
        if best is None or (node.branch_order, node.id) > (best.branch_order, best.id):
            chosen[node.parent_id] = node  # exactly one should be active; else the newest
    branch: list[Node] = []
    current = chosen.get(None)
    while current is not None:
        branch.append(current)
        if current.id in summaries:
            branch.extend(sorted(summaries[current.id], key=lambda n: (n.branch_order, n.id)))
        current = chosen.get(current.id)
    return branch


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
