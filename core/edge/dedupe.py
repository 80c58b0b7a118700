"""Bounded memories of what was handled: retries and gateway replays act once per process.

The database is the truth (a user node carries its platform message id); these only catch
the repeats cheaply, so forgetting the oldest entries is always safe.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
CAPACITY = 10_000


class Recent(Generic[K, V]):
    """A mapping of at most `size` entries; the least recently used one goes first."""

    def __init__(self, size: int = CAPACITY) -> None:
        self._size = size
        self._items: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        if key not in self._items:
            return None
        self._items.move_to_end(key)
        return self._items[key]

    def put(self, key: K, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self._size:
            self._items.popitem(last=False)

    def pop(self, key: K) -> V | None:
        return self._items.pop(key, None)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __len__(self) -> int:
        return len(self._items)


class Seen:
    """Keys handled already: `first(key)` is True only the first time it is asked."""

    def __init__(self, size: int = CAPACITY) -> None:
        self._recent: Recent[Hashable, bool] = Recent(size)

    def first(self, key: Hashable) -> bool:
        if key in self._recent:
            self._recent.get(key)  # the repeat keeps it remembered
            return False
        self._recent.put(key, True)
        return True

    def __contains__(self, key: object) -> bool:
        return key in self._recent
