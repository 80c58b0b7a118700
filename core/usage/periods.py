"""The periods spend limits count in: a UTC day, a UTC month (pure). A limit's period resets
at the next midnight UTC, or the first of the next month at midnight UTC."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from core.store.models import LimitPeriod


@dataclass(frozen=True, slots=True)
class Window:
    """The period `now` is in: its first day, and when the next one starts (its reset)."""

    period: LimitPeriod
    first_day: date
    resets_at: datetime


def window(period: LimitPeriod, now: datetime) -> Window:
    """The day or the month `now` (any timezone) is in, in UTC."""
    today = now.astimezone(UTC).date()
    if period == LimitPeriod.DAY:
        return Window(period, today, _midnight(today + timedelta(days=1)))
    first = today.replace(day=1)
    following = (first + timedelta(days=32)).replace(day=1)
    return Window(period, first, _midnight(following))


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time(), UTC)


def until(resets_at: datetime, now: datetime) -> str:
    """How long until `resets_at`: "in 42 min", "in 3 h 05 min", "in 4 days"."""
    seconds = max(0, int((resets_at - now).total_seconds()))
    if seconds < 3600:
        return f"in {max(1, seconds // 60)} min"
    if seconds < 2 * 86400:
        return f"in {seconds // 3600} h {seconds % 3600 // 60:02d} min"
    return f"in {seconds // 86400} days"


def reset_words(resets_at: datetime, now: datetime) -> str:
    """When a period resets: "at midnight UTC (in 3 h 05 min)" for a day, "on 1 September
    at 00:00 UTC (in 4 days)" for a month."""
    if resets_at - now <= timedelta(days=1):
        return f"at midnight UTC ({until(resets_at, now)})"
    return f"on {resets_at.day} {resets_at:%B} at 00:00 UTC ({until(resets_at, now)})"
