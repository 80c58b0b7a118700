"""Recently handled keys, so Slack's retries and double deliveries act once per process."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable


class RecentKeys:
    """A bounded memory of keys; `first(key)` is True only the first time."""

    def __init__(self, capacity: int = 4096) -> None:
        self._capacity = capacity
        self._keys: OrderedDict[Hashable, None] = OrderedDict()

    def first(self, key: Hashable) -> bool:
        if key in self._keys:
            self._keys.move_to_end(key)
            return False
        self._keys[key] = None
        if len(self._keys) > self._capacity:
            self._keys.popitem(last=False)
        return True

    def __contains__(self, key: Hashable) -> bool:
        return key in self._keys
