"""Answer bodies of what model calls spent (camelCase JSON)."""

from __future__ import annotations

from datetime import date

import msgspec

from core.conversation.spending import Report
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
