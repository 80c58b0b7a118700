"""When a scheduled prompt recurs (pure): a phrase a person writes ("every weekday at 9:00",
"every 2 hours", `cron "0 9 * * 1-5"`) as a five-field crontab, its occurrences in a time zone
(apscheduler's CronTrigger: daylight saving included), and its words (cron-descriptor).

The grammar is small on purpose (docs/schedules.md lists it); anything else is a crontab or a
clear refusal naming examples. Crontabs number weekdays as cron does (0 or 7 = Sunday);
apscheduler 3 numbers them from Monday, so the weekday field is given to it as names.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from apscheduler.triggers.cron import CronTrigger
from cron_descriptor import ExpressionDescriptor, FormatException, Options

from core.text.field_errors import InvalidField
from core.text.safe_text import bounded

MIN_GAP = timedelta(minutes=5)  # occurrences closer than this are refused
EXAMPLES = ('"every weekday at 9:00", "every monday and thursday at 17:30", "daily at 8am", '
            '"every 2 hours", "every 30 minutes", "every month on the 1st at 9:00", '
            'or cron "0 9 * * 1-5"')
DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")  # cron's numbering, 0 = Sunday
_DAY_WORDS = {"sunday": 0, "monday": 1, "tuesday": 2, "wednesday": 3, "thursday": 4,
              "friday": 5, "saturday": 6, "sun": 0, "mon": 1, "tue": 2, "tues": 2, "wed": 3,
              "thu": 4, "thur": 4, "thurs": 4, "fri": 5, "sat": 6}
_CRON_FIELD = re.compile(r"^[0-9a-z*/,\-?]+$")
_TIME = re.compile(r"^(?:(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s*(?P<ampm>am|pm)?|noon|midnight)$")
_EVERY_N = re.compile(r"^(?:every|each)\s+(?:(?P<n>\d+)\s+)?(?P<unit>minutes?|mins?|hours?)"
                      r"(?:\s+at\s+:(?P<at>\d{2}))?$")
_MONTHLY = re.compile(r"^(?:every|each)\s+month\s+on\s+the\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?$")


def refusal(problem: str) -> InvalidField:
    return InvalidField("when", f"{problem}. Say when as in {EXAMPLES}.")


def parse_when(phrase: str) -> str:
    """The crontab of a phrase (InvalidField `when`, naming examples, for anything else)."""
    text = " ".join(phrase.lower().replace("\u00a0", " ").split()).strip(" .")
    if not text:
        raise refusal("Nothing says when it runs")
    if text.startswith("cron "):
        return check_cron(text[5:].strip().strip("\"'"))
    if len(text.split()) == 5 and all(_CRON_FIELD.match(f) for f in text.split()):
        return check_cron(text)
    return check_cron(_phrase_cron(text))


def _phrase_cron(text: str) -> str:
    if text in ("hourly", "every hour", "each hour"):
        return "0 * * * *"
    if (every := _EVERY_N.match(text)) is not None:
        return _every_n(every)
    days, _, at = text.partition(" at ")
    if not at:
        raise refusal(f"{text!r} says no time of day (add one, as in at 9:00)")
    hour, minute = _times(at)
    if (monthly := _MONTHLY.match(days)) is not None:
        day = int(monthly["day"])
        if not 1 <= day <= 31:
            raise refusal(f"A month has no day {day}")
        return f"{minute} {hour} {day} * *"
    return f"{minute} {hour} * * {_days(days)}"


def _every_n(match: re.Match[str]) -> str:
    n = int(match["n"] or 1)
    if match["unit"].startswith("h"):
        minute = int(match["at"] or 0)
        if not 1 <= n <= 23 or minute > 59:
            raise refusal("Every N hours takes N from 1 to 23 (and a minute :00 to :59)")
        return f"{minute} {'*' if n == 1 else f'*/{n}'} * * *"
    if match["at"] or not 1 <= n <= 59 or 60 % n:
        raise refusal("Every N minutes takes an N that divides the hour (5, 10, 15, 20, 30)")
    return f"*/{n} * * * *"


def _times(words: str) -> tuple[str, str]:
    """"9:00", "9am", "17:30", "noon"; several ("9:00 and 17:00") when they share a minute."""
    times = [_time(part) for part in re.split(r"\s*(?:,|\band\b|&)\s*", words) if part]
    minutes = {m for _, m in times}
    if not times or len(minutes) != 1:
        raise refusal("Several times of day must share their minute (9:00 and 17:00)")
    return ",".join(str(h) for h in sorted({h for h, _ in times})), str(minutes.pop())


def _time(word: str) -> tuple[int, int]:
    found = _TIME.match(word.strip())
    if found is None:
        raise refusal(f"I can't read {word!r} as a time of day")
    if word.strip() in ("noon", "midnight"):
        return (12 if word.strip() == "noon" else 0), 0
    hour, minute = int(found["h"]), int(found["m"] or 0)
    if found["ampm"]:
        if not 1 <= hour <= 12:
            raise refusal(f"{word!r}: with am or pm the hour is 1 to 12")
        hour = hour % 12 + (12 if found["ampm"] == "pm" else 0)
    if hour > 23 or minute > 59:
        raise refusal(f"{word!r} is no time of day")
    return hour, minute


def _days(words: str) -> str:
    """The weekday field of "every day", "weekdays", "every mon, wed and fri"."""
    words = re.sub(r"^(?:every|each|on)\s+", "", words)
    if words in ("day", "days", "daily", "every day", "each day"):
        return "*"
    if words in ("weekday", "weekdays"):
        return "1-5"
    if words in ("weekend", "weekends", "weekend day", "weekend days"):
        return "0,6"
    days = set()
    for word in re.split(r"\s*(?:,|\band\b|&)\s*", words):
        number = _DAY_WORDS.get(word.removesuffix("s")) if word else None
        if number is None:
            raise refusal(f"I can't read {word or words!r} as days")
        days.add(number)
    return ",".join(str(d) for d in sorted(days))


def zone(name: str, field: str = "tz") -> ZoneInfo:
    """The time zone of an IANA name ("Europe/Paris", "UTC"); InvalidField `field` otherwise
    (a folder of the zone database such as "America" too)."""
    key = name.strip()
    if key in _zone_names():
        try:
            return ZoneInfo(key)
        except (ZoneInfoNotFoundError, ValueError, OSError):
            pass
    raise InvalidField(field, f"{bounded(name, 64)!r} is no time zone: use an IANA name such "
                             "as Europe/Paris, America/New_York or UTC")


@functools.cache
def _zone_names() -> frozenset[str]:
    """The zone database's names (read once: it walks the database's folders)."""
    return frozenset(available_timezones() | {"UTC"})


@dataclass(frozen=True, slots=True)
class Recurrence:
    """A crontab in a time zone: its occurrences as aware UTC-comparable datetimes."""

    cron: str
    timezone: str

    @property
    def trigger(self) -> CronTrigger:
        """apscheduler's trigger of the crontab (weekdays given by name: see the module)."""
        minute, hour, day, month, weekday = self.cron.split()
        return CronTrigger(minute=minute, hour=hour, day=day, month=month,
                           day_of_week=_weekday_names(weekday), timezone=zone(self.timezone))

    def next_after(self, moment: datetime) -> datetime:
        """The first occurrence strictly after `moment`, in UTC (as the database compares
        them: SQLite compares their text)."""
        found = self.trigger.get_next_fire_time(None, moment + timedelta(microseconds=1))
        assert found is not None, "a crontab checked by check_cron always recurs"
        return found.astimezone(UTC)

    def latest(self, first: datetime, now: datetime) -> datetime | None:
        """The last occurrence from `first` up to `now` (None: none is due yet)."""
        trigger, found, at = self.trigger, None, first
        while (nxt := trigger.get_next_fire_time(found, at)) is not None and nxt <= now:
            found, at = nxt, nxt + timedelta(microseconds=1)
        return found.astimezone(UTC) if found is not None else None

    def words(self) -> str:
        """"At 09:00, Monday through Friday" (24-hour times)."""
        return describe(self.cron)


def describe(cron: str) -> str:
    options = Options()
    options.use_24hour_time_format = True
    try:
        return str(ExpressionDescriptor(cron, options).get_description())
    except FormatException:
        return cron


def check_cron(cron: str) -> str:
    """The crontab, if it is five valid fields whose occurrences are at least MIN_GAP apart."""
    fields = cron.split()
    if len(fields) != 5:
        raise refusal(f"A crontab has five fields (minute hour day month weekday), not "
                      f"{len(fields)}")
    try:
        trigger = Recurrence(" ".join(fields), "UTC").trigger
    except ValueError as error:
        raise refusal(f"The crontab {cron!r} is not valid ({error})") from None
    _check_gap(trigger, cron)
    return " ".join(fields)


def _check_gap(trigger: CronTrigger, cron: str) -> None:
    at = datetime(2026, 1, 1, tzinfo=ZoneInfo("UTC"))
    previous = trigger.get_next_fire_time(None, at)
    if previous is None:
        raise refusal(f"{cron!r} never happens")
    for _ in range(48):
        nxt = trigger.get_next_fire_time(previous, previous + timedelta(microseconds=1))
        if nxt is None:
            return
        if nxt - previous < MIN_GAP:
            raise refusal(f"{cron!r} runs more often than every "
                          f"{int(MIN_GAP.total_seconds() // 60)} minutes")
        previous = nxt


def _weekday_names(field: str) -> str:
    """Cron's weekday field (0 or 7 = Sunday; names too) as apscheduler's list of names."""
    if field in ("*", "?"):
        return "*"
    days: set[int] = set()
    for part in field.split(","):
        span, _, step_text = part.partition("/")
        step = int(step_text) if step_text else 1
        if step < 1:
            raise ValueError(f"weekday step {step_text!r}")
        low, _, high = span.partition("-")
        first = 0 if low in ("*", "") else _weekday(low)
        last = _weekday(high) if high else 6 if low == "*" or step_text else first
        if last < first and last == 0:  # "5-0" written as "fri-sun"
            last = 7
        if last < first:
            raise ValueError(f"weekday range {span!r}")
        days.update(d % 7 for d in range(first, last + 1, step))
    return ",".join(DAYS[d] for d in sorted(days))


def _weekday(word: str) -> int:
    if word.isdigit() and int(word) <= 7:
        return int(word)
    if word[:3] in DAYS:
        return DAYS.index(word[:3])
    raise ValueError(f"weekday {word!r}")
