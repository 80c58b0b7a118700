"""A person's 👍 / 👎 on an answer: one rating per person (platform and user), changeable, and
the words that thank them for it (the same on every platform)."""

from __future__ import annotations

from core.chat import feedback
from core.store.models import Platform


async def rate(message_id: int, platform: Platform, user: str, rating: str) -> str:
    """Record `user`'s rating (`good` or `bad`; InvalidInput otherwise) of an answer, replacing
    their earlier one; what to thank them with."""
    value = feedback.value_of(rating)
    await feedback.give(message_id, platform, user, value)
    return feedback.THANKS[value]
