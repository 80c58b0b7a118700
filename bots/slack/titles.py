"""The title each Slack thread was last given (agents.sessions.rename, assistant.threads.
setTitle), so a turn whose session title did not change costs no call."""

from __future__ import annotations

from collections import OrderedDict

REMEMBERED = 10_000  # threads whose title this process remembers having set


class ShownTitles:
    """The title each thread was last given (so an unchanged title costs no call)."""

    def __init__(self, limit: int = REMEMBERED) -> None:
        self._titles: OrderedDict[tuple[str, str, str], str] = OrderedDict()
        self._limit = limit

    def changed(self, key: tuple[str, str, str], title: str) -> bool:
        if self._titles.get(key) == title:
            return False
        self._titles[key] = title
        self._titles.move_to_end(key)
        while len(self._titles) > self._limit:
            self._titles.popitem(last=False)
        return True
