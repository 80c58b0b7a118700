"""What operators read of the agent's spend: sums of model calls by user, channel, workspace,
model or day (the admin API's `/api/usage`)."""

from __future__ import annotations

from datetime import date

from core.text.field_errors import InvalidField
from core.usage import reports
from core.usage.reports import Report

PLATFORMS = ("slack", "discord", "api")  # where a run was asked from (`api`: an operator)
BY = tuple(reports.BY)


async def usage_report(by: str, since: date | None = None, until: date | None = None,
                       platform: str | None = None, limit: int = 50,
                       cursor: str | None = None) -> Report:
    """Model calls from UTC day `since` to `until` (inclusive, either open), of one platform
    or all, summed by `by`, a page at a time (InvalidField naming what is wrong)."""
    if by not in reports.BY:
        raise InvalidField("by", f"must be one of {', '.join(BY)}")
    if since is not None and until is not None and since > until:
        raise InvalidField("from", f"{since} is after `to` ({until})")
    if platform and platform not in PLATFORMS:
        raise InvalidField("platform", f"must be one of {', '.join(PLATFORMS)}")
    if not 1 <= limit <= reports.MAX_ROWS:
        raise InvalidField("limit", f"must be between 1 and {reports.MAX_ROWS}")
    return await reports.report(by, since, until, platform or None, limit, cursor)
