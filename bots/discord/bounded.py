"""Small bounded memories: what the bot already handled, and caches of database lookups.

The database is the truth; these only save queries and catch gateway replays, so forgetting
the oldest entries is always safe.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Recent(Generic[K, V]):
    """A mapping of at most `size` entries; the least recently used one goes first."""

    def __init__(self, size: int = 10_000) -> None:
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


class Seen:
    """Keys handled already: `claim` is True only the first time (gateway RESUME replays a
    message the bot may have handled; it must not start a second run)."""

    def __init__(self, size: int = 10_000) -> None:
        self._recent: Recent[Hashable, bool] = Recent(size)

    def claim(self, key: Hashable) -> bool:
        if key in self._recent:
            return False
        self._recent.put(key, True)
        return True
