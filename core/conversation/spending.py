"""What operators read and set of the agent's spend: sums of model calls by user, channel,
workspace, model or day (the admin API's `/api/usage`), and the spend limits (`/api/limits`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, datetime

from core.errors import NotFound
from core.runtime.pool import RunPool
from core.store.models import LimitPeriod, LimitScope, LimitUnit, SpendLimit
from core.text.field_errors import InvalidField
from core.usage import limits as spend_limits
from core.usage import reports
from core.usage.reports import MAX_ROWS, Report, ReportRow

PLATFORMS = ("slack", "discord", "api")  # where a run was asked from (`api`: an operator)
BY = tuple(reports.BY)
__all__ = ["BY", "MAX_ROWS", "PLATFORMS", "LimitView", "LimitsView", "Report", "ReportRow",
           "limits", "remove_limit", "set_limit", "top_spenders", "usage_report"]


async def usage_report(by: str, since: date | None = None, until: date | None = None,
                       platform: str | None = None, limit: int = 50,
                       cursor: str | None = None) -> Report:
    """Model calls from UTC day `since` to `until` (inclusive, either open), of one platform
    or all, summed by `by`, a page at a time (InvalidField naming what is wrong)."""
    _check(by, since, until, platform)
    if not 1 <= limit <= reports.MAX_ROWS:
        raise InvalidField("limit", f"must be between 1 and {reports.MAX_ROWS}")
    return await reports.report(by, since, until, platform or None, limit, cursor)


def _check(by: str, since: date | None, until: date | None, platform: str | None) -> None:
    if by not in reports.BY:
        raise InvalidField("by", f"must be one of {', '.join(BY)}")
    if since is not None and until is not None and since > until:
        raise InvalidField("from", f"{since} is after `to` ({until})")
    if platform and platform not in PLATFORMS:
        raise InvalidField("platform", f"must be one of {', '.join(PLATFORMS)}")


async def top_spenders(by: str, since: date, until: date, platform: str | None = None,
                       limit: int = 10) -> list[ReportRow]:
    """The `limit` users, channels, workspaces or models that used the most tokens from UTC
    day `since` to `until`, most first (the same checks as `usage_report`)."""
    _check(by, since, until, platform)
    return await reports.top(by, since, until, platform or None, limit)


# --- spend limits (the admin API's /api/limits) ---------------------------------------------

@dataclass(frozen=True, slots=True)
class LimitView:
    """A spend limit: the default of its setting (`subject` None), or an operator's for one
    user, channel or workspace (`amount` None: no limit for it)."""

    scope: str
    period: str
    unit: str
    amount: float | None
    subject: str | None = None
    updated_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class LimitsView:
    defaults: list[LimitView]
    overrides: list[LimitView]


async def limits(pool: RunPool) -> LimitsView:
    """The defaults of the settings (those set) and every limit an operator set."""
    defaults = [LimitView(str(scope), str(period), str(unit), amount)
                for (scope, period, unit), amount in pool.limits.defaults.items()]
    rows = await spend_limits.overrides()
    return LimitsView(defaults, [_view(row) for row in rows])


async def set_limit(scope: str, subject: str, period: str, unit: str,
                    amount: float | None) -> LimitView:
    """One user's, channel's or workspace's limit from now on (None: none for it)."""
    scope_, period_, unit_ = _key(scope, period, unit)
    if not subject.strip():
        raise InvalidField("subject", "must name the user, channel or workspace")
    if amount is not None and (not math.isfinite(amount) or amount < 0):
        raise InvalidField("amount", "must be 0 or more (null: no limit)")
    return _view(await spend_limits.set_override(scope_, subject, period_, unit_, amount))


async def remove_limit(scope: str, subject: str, period: str, unit: str) -> None:
    """Back to the default for that one; NotFound when no operator had set it."""
    key = _key(scope, period, unit)
    if not await spend_limits.remove_override(key[0], subject, key[1], key[2]):
        raise NotFound(f"no {scope} limit of {subject!r} per {period} in {unit} was set")


def _key(scope: str, period: str, unit: str) -> tuple[LimitScope, LimitPeriod, LimitUnit]:
    for name, value, kind in (("scope", scope, LimitScope), ("period", period, LimitPeriod),
                              ("unit", unit, LimitUnit)):
        if value not in tuple(kind):
            raise InvalidField(name, f"must be one of {', '.join(kind)}")
    return LimitScope(scope), LimitPeriod(period), LimitUnit(unit)


def _view(row: SpendLimit) -> LimitView:
    return LimitView(str(row.scope), str(row.period), str(row.unit), row.amount, row.subject,
                     row.updated_at)
