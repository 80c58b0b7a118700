"""The UTC day and month spend limits count in, and how their resets read."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

from core.store.models import LimitPeriod
from core.usage.periods import reset_words, window

NOW = datetime(2026, 2, 28, 21, 55, tzinfo=UTC)


def test_a_day_and_a_month_reset_at_midnight_utc() -> None:
    day, month = window(LimitPeriod.DAY, NOW), window(LimitPeriod.MONTH, NOW)
    assert (day.first_day, day.resets_at) == (date(2026, 2, 28), datetime(2026, 3, 1, tzinfo=UTC))
    assert (month.first_day, month.resets_at) == (date(2026, 2, 1), datetime(2026, 3, 1, tzinfo=UTC))
    december = window(LimitPeriod.MONTH, datetime(2026, 12, 31, 23, 59, tzinfo=UTC))
    assert december.resets_at == datetime(2027, 1, 1, tzinfo=UTC)


def test_a_time_elsewhere_counts_in_its_utc_day() -> None:
    tokyo = datetime(2026, 3, 1, 6, 0, tzinfo=timezone(timedelta(hours=9)))  # 21:00 UTC the day before
    assert window(LimitPeriod.DAY, tokyo).first_day == date(2026, 2, 28)


def test_resets_read_as_when_and_how_long() -> None:
    assert reset_words(datetime(2026, 3, 1, tzinfo=UTC), NOW) == "at midnight UTC (in 2 h 05 min)"
    assert reset_words(NOW + timedelta(minutes=30), NOW) == "at midnight UTC (in 30 min)"
    later = datetime(2026, 2, 10, tzinfo=UTC)
    assert reset_words(datetime(2026, 3, 1, tzinfo=UTC), later) == (
        "on 1 March at 00:00 UTC (in 19 days)")
