"""The sums people and operators read of what model calls spent: per answer and per
conversation (from `usage_call`), and by user, channel, workspace, model or day (from the
day's sums, `usage_day`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.functions import Count, Sum

from core.agent.thinking import UsageTotals
from core.store.models import LimitScope, UsageCall, UsageDay

CHUNK = 500  # ids per query: far below every backend's limit of bound parameters
_TOTALS = {"calls": Count("id"), "prompt": Sum("prompt_tokens"),
           "completion": Sum("completion_tokens"), "cached": Sum("cached_tokens"),
           "cost": Sum("cost")}


async def of_messages(ids: Sequence[int], db: BaseDBAsyncClient | None = None
                      ) -> dict[int, UsageTotals]:
    """What each of these assistant messages' runs spent (messages without calls left out)."""
    totals: dict[int, UsageTotals] = {}
    for start in range(0, len(ids), CHUNK):
        query = UsageCall.filter(message_id__in=list(ids[start:start + CHUNK]))
        rows = await query.using_db(db).annotate(**_TOTALS).group_by("message_id").values(
            "message_id", *_TOTALS)
        totals.update({row["message_id"]: _totals(row) for row in rows})
    return totals


async def of_session(session_id: int, db: BaseDBAsyncClient | None = None) -> UsageTotals:
    """What every run of the conversation spent, every version of every answer."""
    rows = await UsageCall.filter(session_id=session_id).using_db(db).annotate(
        **_TOTALS).values(*_TOTALS)
    return _totals(rows[0]) if rows else UsageTotals()


_DAY_TOTALS = {"calls": Sum("calls"), "prompt": Sum("prompt_tokens"),
               "completion": Sum("completion_tokens"), "cached": Sum("cached_tokens"),
               "cost": Sum("cost"), "priced": Sum("priced_calls")}


async def spent_by(scope: LimitScope, subject: str, since: date,
                   until: date | None = None) -> UsageTotals:
    """What one user, channel or workspace spent from the day `since` on (to `until`, both
    UTC days, inclusive)."""
    query = UsageDay.filter(**{str(scope): subject, "day__gte": since})
    if until is not None:
        query = query.filter(day__lte=until)
    rows = await query.annotate(**_DAY_TOTALS).values(*_DAY_TOTALS)
    if not rows:
        return UsageTotals()
    row = rows[0]
    return _totals({**row, "cost": row["cost"] if row["priced"] else None})


def _totals(row: dict[str, Any]) -> UsageTotals:
    cost = row["cost"]
    return UsageTotals(int(row["calls"] or 0), int(row["prompt"] or 0),
                       int(row["completion"] or 0), int(row["cached"] or 0),
                       None if cost is None else float(cost))
