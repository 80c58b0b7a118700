"""The sums people and operators read of what model calls spent: per answer and per
conversation (from `usage_call`), and by user, channel, workspace, model or day (from the
day's sums, `usage_day`: a report reads one of its four dimensions, so its rows are at most a
day's users, channels, workspaces or models, however many calls they made)."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.expressions import F, Q
from tortoise.queryset import QuerySet
from tortoise.functions import Count, Sum

from core.agent.thinking import UsageTotals
from core.errors import InvalidInput
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


async def spent_by(scope: LimitScope, subject: str, since: date, until: date | None = None,
                   workspace: str | None = None) -> UsageTotals:
    """What one user, channel (of `workspace`) or workspace spent from the day `since` on
    (to `until`, both UTC days, inclusive)."""
    query = UsageDay.filter(dimension=str(scope), subject=subject, day__gte=since)
    if until is not None:
        query = query.filter(day__lte=until)
    if workspace is not None:
        query = query.filter(workspace=workspace)
    rows = await query.annotate(**_DAY_TOTALS).values(*_DAY_TOTALS)
    return _day_totals(rows[0]) if rows else UsageTotals()


def _totals(row: dict[str, Any]) -> UsageTotals:
    cost = row["cost"]
    return UsageTotals(int(row["calls"] or 0), int(row["prompt"] or 0),
                       int(row["completion"] or 0), int(row["cached"] or 0),
                       None if cost is None else float(cost))


# --- sums by user, channel, workspace, model or day -------------------------------------------

# What a report sums by -> the dimension of usage_day it reads, and its key: (column, name).
# Every call has one workspace row (empty for a conversation bound to none): the days are theirs.
BY: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
    "user": ("user", (("platform", "platform"), ("subject", "user"))),
    "channel": ("channel", (("workspace", "workspace"), ("subject", "channel"))),
    "workspace": ("workspace", (("subject", "workspace"),)),
    "model": ("model", (("subject", "model"),)),
    "day": ("workspace", (("day", "day"),)),
}
MAX_ROWS = 200


@dataclass(frozen=True, slots=True)
class ReportRow:
    """One group of a report: its key (column -> value) and what its calls spent."""

    key: dict[str, str]
    usage: UsageTotals


@dataclass(frozen=True, slots=True)
class Report:
    rows: list[ReportRow]
    next_cursor: str | None  # the key of the last row, for the next page (None: the last page)


async def report(by: str, since: date | None = None, until: date | None = None,
                 platform: str | None = None, limit: int = 50,
                 cursor: str | None = None) -> Report:
    """Calls from the UTC day `since` to `until` (inclusive; None: unbounded), of one
    platform or all, summed by `by` (a key of BY), in the order of their keys, a page of
    `limit` at a time after `cursor`."""
    dimension, key = BY[by]
    columns = tuple(column for column, _ in key)
    query = _days(dimension, since, until, platform)
    if cursor is not None:
        query = query.filter(_after(columns, decode_key(cursor, columns)))
    rows = await query.annotate(**_DAY_TOTALS).group_by(*columns).order_by(*columns).limit(
        limit + 1).values(*columns, *_DAY_TOTALS)
    found = [ReportRow({name: _text(row[column]) for column, name in key}, _day_totals(row))
             for row in rows[:limit]]
    more = len(rows) > limit
    return Report(found, encode_key([found[-1].key[name] for _, name in key]) if more else None)


async def top(by: str, since: date | None = None, until: date | None = None,
              platform: str | None = None, limit: int = 10) -> list[ReportRow]:
    """The `limit` groups of `by` whose calls used the most tokens (prompt and completion)
    from the UTC day `since` to `until`, most first: one query, however many groups there are."""
    dimension, key = BY[by]
    columns = tuple(column for column, _ in key)
    rows = await _days(dimension, since, until, platform).annotate(
        **_DAY_TOTALS, tokens=Sum(F("prompt_tokens") + F("completion_tokens"))).group_by(
        *columns).order_by("-tokens", *columns).limit(limit).values(*columns, *_DAY_TOTALS)
    return [ReportRow({name: _text(row[column]) for column, name in key}, _day_totals(row))
            for row in rows]


def _days(dimension: str, since: date | None, until: date | None,
          platform: str | None) -> QuerySet[UsageDay]:
    query = UsageDay.filter(dimension=dimension)
    if since is not None:
        query = query.filter(day__gte=since)
    if until is not None:
        query = query.filter(day__lte=until)
    if platform:
        query = query.filter(platform=platform)
    return query


def _after(columns: tuple[str, ...], values: list[Any]) -> Q:
    """Rows whose key comes after `values` in key order: (a > x) or (a = x and b > y)."""
    condition = _q(f"{columns[-1]}__gt", values[-1])
    for index in range(len(columns) - 2, -1, -1):
        condition = _q(f"{columns[index]}__gt", values[index]) | (
            _q(columns[index], values[index]) & condition)
    return condition


def _q(name: str, value: Any) -> Q:
    return Q(**{name: value})


def encode_key(key: list[str]) -> str:
    """A page's cursor: the key of its last row, URL-safe."""
    return base64.urlsafe_b64encode(json.dumps(key).encode()).decode().rstrip("=")


def decode_key(token: str, columns: tuple[str, ...]) -> list[Any]:
    """The key inside a cursor, its day a date; InvalidInput for anything a report of these
    columns did not make."""
    try:
        key = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        if (isinstance(key, list) and len(key) == len(columns)
                and all(isinstance(k, str) for k in key)):
            return [date.fromisoformat(v) if c == "day" else v
                    for c, v in zip(columns, key, strict=True)]
    except (ValueError, binascii.Error, UnicodeDecodeError):
        pass
    raise InvalidInput(f"cursor {token!r} is not a cursor of this report")


def _day_totals(row: dict[str, Any]) -> UsageTotals:
    return _totals({**row, "cost": row["cost"] if row["priced"] else None})


def _text(value: object) -> str:
    return value.isoformat() if isinstance(value, date) else str(value)
