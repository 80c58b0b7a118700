"""When a schedule recurs (pure): phrases and crontabs read, occurrences in time zones (daylight
saving too), and clear refusals that name examples."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core.chat.recurrence import Recurrence, check_cron, describe, parse_when, zone
from core.text.field_errors import InvalidField

SATURDAY_NOON = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(("phrase", "cron"), [
    ("every weekday at 9:00", "0 9 * * 1-5"),
    ("Every Weekday At 09:00", "0 9 * * 1-5"),
    ("weekdays at 9am", "0 9 * * 1-5"),
    ("every day at 8:30", "30 8 * * *"),
    ("daily at 12pm", "0 12 * * *"),
    ("every weekend at noon", "0 12 * * 0,6"),
    ("every monday and thursday at 5:30pm", "30 17 * * 1,4"),
    ("every mon, wed & fri at 9:00 and 17:00", "0 9,17 * * 1,3,5"),
    ("on sundays at midnight", "0 0 * * 0"),
    ("every month on the 1st at 9:00", "0 9 1 * *"),
    ("every hour", "0 * * * *"),
    ("hourly", "0 * * * *"),
    ("every hour at :15", "15 * * * *"),
    ("every 2 hours", "0 */2 * * *"),
    ("every 15 minutes", "*/15 * * * *"),
    ('cron "0 9 * * 1-5"', "0 9 * * 1-5"),
    ("cron 30 6 * * 0", "30 6 * * 0"),
    ("0 9 * * mon-fri", "0 9 * * mon-fri"),
])
def test_phrases_and_crontabs(phrase: str, cron: str) -> None:
    assert parse_when(phrase) == cron


@pytest.mark.parametrize(("phrase", "says"), [
    ("", "Nothing says when"),
    ("tomorrow", "says no time of day"),
    ("every monday", "says no time of day"),
    ("every funday at 9", "'funday' as days"),
    ("every day at 25:00", "no time of day"),
    ("every day at 13pm", "the hour is 1 to 12"),
    ("every day at 9:00 and 9:30", "share their minute"),
    ("every 7 minutes", "divides the hour"),
    ("every 30 hours", "from 1 to 23"),
    ("every month on the 32nd at 9", "no day 32"),
    ("* * * * *", "more often than every 5 minutes"),
    ('cron "61 9 * * *"', "is not valid"),
    ('cron "0 9 * *"', "five fields"),
    ("0 0 30 2 *", "never happens"),
])
def test_what_is_refused_says_why_and_how(phrase: str, says: str) -> None:
    with pytest.raises(InvalidField) as refused:
        parse_when(phrase)
    assert refused.value.field == "when"
    assert says in refused.value.message and "every weekday at 9:00" in refused.value.message


def test_weekdays_are_numbered_as_cron_numbers_them() -> None:
    """0 and 7 are Sunday in a crontab (apscheduler 3 counts from Monday)."""
    for cron, day in (("0 9 * * 0", "Sun"), ("0 9 * * 7", "Sun"), ("0 9 * * 1", "Mon"),
                      ("0 9 * * 6", "Sat"), ("0 9 * * 5-7", "Sun"), ("0 9 * * */3", "Sun")):
        assert f"{Recurrence(cron, 'UTC').next_after(SATURDAY_NOON):%a}" == day, cron
    weekdays = Recurrence("0 9 * * 1-5", "UTC")
    assert weekdays.next_after(SATURDAY_NOON) == datetime(2026, 12, 7, 9, tzinfo=UTC)


def test_occurrences_are_in_the_schedules_time_zone_across_daylight_saving() -> None:
    paris = Recurrence("0 9 * * *", "Europe/Paris")
    assert paris.next_after(datetime(2026, 3, 28, 12, tzinfo=UTC)) == datetime(
        2026, 3, 29, 7, tzinfo=UTC)  # summer time from that night: 9:00 is 7:00 UTC
    assert paris.next_after(datetime(2026, 3, 27, 12, tzinfo=UTC)) == datetime(
        2026, 3, 28, 8, tzinfo=UTC)
    assert paris.next_after(SATURDAY_NOON).tzinfo == UTC  # stored and compared in UTC


def test_the_latest_occurrence_due() -> None:
    daily = Recurrence("0 9 * * *", "UTC")
    first = datetime(2026, 12, 1, 9, tzinfo=UTC)
    assert daily.latest(first, datetime(2026, 12, 1, 8, 59, tzinfo=UTC)) is None
    assert daily.latest(first, first) == first
    assert daily.latest(first, datetime(2026, 12, 4, 10, tzinfo=UTC)) == datetime(
        2026, 12, 4, 9, tzinfo=UTC)


def test_words_and_zones() -> None:
    assert describe("0 9 * * 1-5") == "At 09:00, Monday through Friday"
    assert describe("*/30 * * * *") == "Every 30 minutes"
    assert zone("Europe/Paris").key == "Europe/Paris"
    for bad in ("Mars/Olympus", "../etc/passwd", "", "America", "\ud800"):
        with pytest.raises(InvalidField) as refused:
            zone(bad)
        assert refused.value.field == "tz" and "IANA" in refused.value.message
    assert check_cron(" 0  9 * * 1-5 ") == "0 9 * * 1-5"
