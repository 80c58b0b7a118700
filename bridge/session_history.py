"""The conversation the Bridge keeps per session, for runs sent without `history`.

Sessions whose caller sends `history` (hermes-chat's core always does) have no copy here, so
this holds only what callers asked the Bridge to keep.
"""

from __future__ import annotations

from typing import Any

Message = dict[str, Any]


class SessionHistories:
    """session_id → the agent's messages after its last turn (event-loop only)."""

    def __init__(self) -> None:
        self._messages: dict[str, list[Message]] = {}

    def get(self, session_id: str) -> list[Message]:
        return list(self._messages.get(session_id, []))

    def set(self, session_id: str, messages: list[Message]) -> None:
        self._messages[session_id] = list(messages)

    def drop(self, session_id: str) -> bool:
        return self._messages.pop(session_id, None) is not None
