"""Refusals only the Discord edge knows about."""

from __future__ import annotations

from core.errors import HermesChatError


class CannotAnswerHere(HermesChatError):
    """The bot lacks permissions in a channel; `can_send` says whether it may still say so there."""

    code = "missing_permissions"

    def __init__(self, message: str, *, can_send: bool) -> None:
        super().__init__(message)
        self.can_send = can_send
