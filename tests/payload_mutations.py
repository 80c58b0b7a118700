"""Hypothesis mutations of a platform's JSON payloads (Slack's, Discord's): a real shape with
a few fields deleted, replaced by a value of any type, or added, anywhere in it."""

from __future__ import annotations

import copy
from collections.abc import Collection, Iterator
from typing import Any

from hypothesis import strategies as st

Payload = dict[str, Any]
Path = tuple[Any, ...]

ANY_VALUE = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 2**40), st.floats(allow_nan=False), st.text(max_size=8),
    st.sampled_from(["", "\x00", "\ud83d", "0", "1:2"]),
    st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def paths(value: Any, prefix: Path = ()) -> Iterator[Path]:
    """Every path to a field or item inside `value`."""
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in children:
        yield (*prefix, key)
        yield from paths(child, (*prefix, key))


def mutate(payload: Payload, data: st.DataObject, values: st.SearchStrategy[Any] = ANY_VALUE,
           keep: Collection[Path] = ()) -> Payload:
    """`payload` with one to three fields deleted, replaced or added (values drawn from
    `values`), anywhere but at the paths in `keep`."""
    mutated = copy.deepcopy(payload)
    for _ in range(data.draw(st.integers(1, 3))):
        found = [p for p in paths(mutated) if p not in keep]
        if not found:
            break
        path = data.draw(st.sampled_from(found))
        parent = mutated
        for key in path[:-1]:
            parent = parent[key]
        operation = data.draw(st.sampled_from(["delete", "replace", "add"]))
        if operation == "delete":
            del parent[path[-1]]
        elif operation == "replace":
            parent[path[-1]] = data.draw(values)
        elif isinstance(parent, dict):
            parent[data.draw(st.text(min_size=1, max_size=5))] = data.draw(values)
    return mutated
