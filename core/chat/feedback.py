"""👍 / 👎 on assistant messages: one rating per person (platform and user), changeable; read
back per message (admin detail, export), counted (/metrics), and used to find sessions."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import cast

from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.expressions import Subquery
from tortoise.queryset import QuerySet

from core.chat import tree
from core.errors import InvalidInput
from core.store.models import (
    AnswerFeedback,
    ChatMessage,
    ChatSession,
    ConversationBinding,
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


@dataclass(frozen=True, slots=True)
class RatedAnswer:
    """An answer people rated, with what the feedback page shows beside it: the question it
    answers, its conversation and where that lives, and every version of the answer (itself
    among them) by branch order, to be read side by side."""

    answer: ChatMessage
    question: ChatMessage | None
    session: ChatSession
    bindings: tuple[ConversationBinding, ...]
    ratings: tuple[Feedback, ...]
    versions: tuple[ChatMessage, ...]


async def rated_answers(value: FeedbackValue | None = None, model: str | None = None,
                        channel: str | None = None, limit: int = 50) -> list[RatedAnswer]:
    """The `limit` answers rated most recently (`value`: only those someone rated so), of one
    model (the answer's own) and one channel (of a thread its conversation is bound to)."""
    query = AnswerFeedback.all()
    if value is not None:
        query = query.filter(value=value)
    if model:
        query = query.filter(message__model_id=model)
    if channel:
        bound = ConversationBinding.filter(channel=channel).values("session_id")
        query = query.filter(message__session_id__in=Subquery(bound))
    rows = await query.order_by("-at", "-id").limit(limit * 4).values_list("message_id",
                                                                          flat=True)
    newest = list(dict.fromkeys(cast(list[int], rows)))  # an answer once, at its newest rating
    return await _rated(newest[:limit])


async def _rated(ids: list[int]) -> list[RatedAnswer]:
    answers = {m.id: m for m in await ChatMessage.filter(id__in=ids).select_related("session")}
    shown = [answers[i] for i in ids if i in answers]
    parents = {m.parent_id for m in shown if m.parent_id is not None}
    questions = {m.id: m for m in await ChatMessage.filter(id__in=parents)}
    siblings: dict[int | None, list[ChatMessage]] = defaultdict(list)
    for sibling in await ChatMessage.filter(parent_id__in=parents, role=Role.ASSISTANT).order_by(
            "branch_order", "id"):
        siblings[sibling.parent_id].append(sibling)
    bindings: dict[int, list[ConversationBinding]] = defaultdict(list)
    for binding in await ConversationBinding.filter(
            session_id__in={m.session_id for m in shown}).order_by("id"):
        bindings[binding.session_id].append(binding)
    ratings = await of_messages([m.id for m in shown])
    return [RatedAnswer(m, questions.get(m.parent_id or 0), m.session,
                        tuple(bindings[m.session_id]), tuple(ratings[m.id]),
                        tuple(siblings.get(m.parent_id, [m])))
            for m in shown]
