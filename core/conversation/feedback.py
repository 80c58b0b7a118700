"""👍 / 👎 a person gives an answer: stored as their rating of it (replacing an earlier one;
`core.chat.feedback` keeps and counts them), and thanked in the same words on every platform."""

from __future__ import annotations

from core.chat import feedback
from core.chat.feedback import RatedAnswer, rated_answers

__all__ = ["RatedAnswer", "rate", "rated_answers"]
from core.store.models import Platform


async def rate(message_id: int, platform: Platform, user: str, kind: str) -> str:
    """Record `user`'s `kind` (good or bad; InvalidInput otherwise) of an assistant message;
    what they are thanked with."""
    value = feedback.value_of(kind)
    await feedback.give(message_id, platform, user, value)
    return feedback.THANKS[value]
