"""👍 / 👎 on assistant messages: one rating per person (platform and user), changeable; read
back per message (admin detail, export), counted (/metrics), and used to find sessions."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.expressions import Subquery
from tortoise.queryset import QuerySet

from core.chat import tree
from core.errors import InvalidInput
from core.store.models import (
    AnswerFeedback,
    ChatSession,
    FeedbackValue,
    Platform,
    Role,
    utc_now,
)


THANKS = {FeedbackValue.GOOD: "Thanks! Glad it helped.",
          FeedbackValue.BAD: "Thanks for saying so: it helps us do better."}


@dataclass(frozen=True, slots=True)
class Feedback:
    user: str
    value: FeedbackValue
    at: datetime


def value_of(text: str) -> FeedbackValue:
    """`good` or `bad` as a FeedbackValue; InvalidInput for anything else."""
    try:
        return FeedbackValue(text)
    except ValueError:
        raise InvalidInput(f"{text!r} is not a rating (good or bad)") from None


async def give(message_id: int, platform: Platform, user: str, value: FeedbackValue) -> None:
    """Record `user`'s rating of an assistant message, replacing their earlier one."""
    message = await tree.get_message(message_id)
    if message.role != Role.ASSISTANT:
        raise InvalidInput(f"message {message_id} is not an answer")
    await AnswerFeedback.update_or_create(
        {"value": value, "at": utc_now()}, message_id=message_id, platform=platform, user=user)


async def of_messages(
    message_ids: Sequence[int], db: BaseDBAsyncClient | None = None
) -> dict[int, list[Feedback]]:
    """Each message's ratings, oldest first (read on `db`, a snapshot, if given)."""
    found: dict[int, list[Feedback]] = defaultdict(list)
    if message_ids:
        rows = await AnswerFeedback.filter(message_id__in=list(message_ids)).using_db(db).order_by(
            "at", "id")
        for row in rows:
            found[row.message_id].append(Feedback(row.user, FeedbackValue(row.value), row.at))
    return found


async def counts() -> dict[FeedbackValue, int]:
    """How many ratings of each value there are now."""
    return {value: await AnswerFeedback.filter(value=value).count() for value in FeedbackValue}


def with_feedback(query: QuerySet[ChatSession], value: FeedbackValue) -> QuerySet[ChatSession]:
    """Only sessions with an answer rated `value`."""
    rated = AnswerFeedback.filter(value=value).values("message__session_id")
    return query.filter(id__in=Subquery(rated))
