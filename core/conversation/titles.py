"""A conversation's title on the platforms' threads: the rule "the session's title changed ->
tell its thread" written once, for every adapter.

Core gives a session its title (`core.chat.sessions.auto_title` from the first answered message,
`rename_session` from a person); an adapter asks `to_show` as a turn ends and renames its
thread (Slack: agents.sessions.rename / assistant.threads.setTitle; Discord: the thread's
name) only when the answer is a title, so an unchanged title costs no platform call.
"""

from __future__ import annotations

from collections.abc import Hashable

from core.edge.dedupe import Recent
from core.store.models import ChatSession

REMEMBERED = 10_000  # threads whose title this process remembers having set


class ShownTitles:
    """The title each thread was last given (in this process)."""

    def __init__(self, limit: int = REMEMBERED) -> None:
        self._titles: Recent[Hashable, str] = Recent(limit)

    def changed(self, key: Hashable, title: str) -> bool:
        """Whether `title` is new for the thread `key` (then it counts as given)."""
        if self._titles.get(key) == title:
            return False
        self._titles.put(key, title)
        return True

    def forget(self, key: Hashable) -> None:
        """The title did not reach the thread: the next turn tries again."""
        self._titles.pop(key)


async def title_of(session_id: int) -> str | None:
    """The session's title (None: it has none yet, or the session is gone)."""
    session = await ChatSession.filter(id=session_id).only("id", "title").first()
    return session.title if session is not None and session.title else None


async def to_show(shown: ShownTitles, key: Hashable, session_id: int) -> str | None:
    """The title the thread `key` should be given now: the session's, when it has one that
    the thread was not given yet; None when there is nothing to tell."""
    title = await title_of(session_id)
    return title if title and shown.changed(key, title) else None
