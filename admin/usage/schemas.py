"""Request and answer bodies of what model calls spent and the spend limits (camelCase JSON)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Literal

import msgspec

from admin.text import NON_BLANK
from core.conversation.spending import LimitsView, LimitView, Report
from core.conversation.vocabulary import UsageTotals


class UsageOut(msgspec.Struct, frozen=True, rename="camel"):
    """What model calls spent: how many, their tokens as the model reported them
    (`promptTokens` includes `cachedTokens`; `tokens` is prompt and completion, what a token
    limit counts) and their cost at the prices of their day (null: none was priced)."""

    calls: int
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    tokens: int
    cost: float | None


def usage_out(usage: UsageTotals) -> UsageOut:
    return UsageOut(usage.calls, usage.prompt_tokens, usage.completion_tokens,
                    usage.cached_tokens, usage.tokens, usage.cost)


class UsageRowOut(msgspec.Struct, frozen=True):
    """One group: its key (`platform` and `user`, `workspace` and `channel`, `workspace`,
    `model` or `day`) and what its model calls spent."""

    key: dict[str, str]
    usage: UsageOut


class UsageReportOut(msgspec.Struct, frozen=True, rename="camel"):
    """Groups in the order of their keys; pass `nextCursor` as `cursor` for the next page
    (null: the last). `from` and `to` are the UTC days asked for (null: open)."""

    by: str
    from_: date | None = msgspec.field(name="from")
    to: date | None
    items: list[UsageRowOut]
    next_cursor: str | None


def report_out(by: str, since: date | None, until: date | None, report: Report) -> UsageReportOut:
    rows = [UsageRowOut(row.key, usage_out(row.usage)) for row in report.rows]
    return UsageReportOut(by, since, until, rows, report.next_cursor)


Scope = Literal["user", "channel", "workspace"]
Period = Literal["day", "month"]
Unit = Literal["tokens", "cost"]
Subject = Annotated[str, msgspec.Meta(min_length=1, max_length=64, pattern=NON_BLANK,
                                      description="the user id (a platform's, or `admin` for "
                                                  "the operators), channel id or workspace id")]
Amount = Annotated[float, msgspec.Meta(ge=0, le=1e15)]


class LimitIn(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One user's, channel's or workspace's limit per day or month, in tokens (prompt and
    completion) or cost; `amount` null: no limit for it (0: no run at all)."""

    scope: Scope
    subject: Subject
    period: Period
    unit: Unit
    amount: Amount | None


class LimitOut(msgspec.Struct, frozen=True, rename="camel"):
    """A limit: a setting's default (`subject` null) or an operator's (`amount` null: none)."""

    scope: str
    period: str
    unit: str
    amount: float | None
    subject: str | None
    updated_at: datetime | None


class LimitsOut(msgspec.Struct, frozen=True):
    """The defaults of the LIMIT_* settings that are set, and the operators' own limits (each
    in place of the default for its user, channel or workspace)."""

    defaults: list[LimitOut]
    overrides: list[LimitOut]


def limit_out(view: LimitView) -> LimitOut:
    return LimitOut(view.scope, view.period, view.unit, view.amount, view.subject,
                    view.updated_at)


def limits_out(view: LimitsView) -> LimitsOut:
    return LimitsOut([limit_out(v) for v in view.defaults], [limit_out(v) for v in view.overrides])
