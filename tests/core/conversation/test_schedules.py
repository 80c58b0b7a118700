"""`/hermes schedule …` read into one command (pure), and who may change a schedule."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core.chat.policy import Policy
from core.chat.schedules import NewSchedule, Where
from core.conversation import schedules
from core.conversation.schedules import ScheduleCommand, read_command
from core.errors import NotFound, NotYours
from core.store.models import Misfire, Platform, ScheduleState
from core.text.field_errors import InvalidField

NOW = datetime(2026, 12, 5, 12, tzinfo=UTC)
HERE = Where(Platform.SLACK, "T1", "C1")


def test_a_new_schedule_with_its_options_and_prompt_as_written() -> None:
    assert read_command('"every weekday at 9:00" Summarize  the open PRs\nplease') == ScheduleCommand(
        "add", when="every weekday at 9:00", prompt="Summarize  the open PRs\nplease")
    assert read_command('\u201cdaily at 8\u201d tz=Europe/Paris MISFIRE=skip Plan the day') == (
        ScheduleCommand("add", when="daily at 8", prompt="Plan the day",
                        options={"tz": "Europe/Paris", "misfire": "skip"}))
    assert read_command('cron "0 9 * * 1-5" Stand-up notes') == ScheduleCommand(
        "add", when="cron 0 9 * * 1-5", prompt="Stand-up notes")


def test_the_actions() -> None:
    assert read_command("list") == ScheduleCommand("list")
    assert read_command("LIST extra") == ScheduleCommand("list")
    assert read_command("pause 3") == ScheduleCommand("pause", 3)
    assert read_command("delete #12") == ScheduleCommand("delete", 12)
    assert read_command("history 4") == ScheduleCommand("history", 4)


@pytest.mark.parametrize(("text", "field", "says"), [
    ("", "schedule", "Say what to schedule"),
    ("pause", "schedule", "takes a schedule's number"),
    ("resume three", "schedule", "takes a schedule's number"),
    ("every day at 9 Summarize", "when", "double quotes"),
    ('"every day at 9 Summarize', "when", "not closed"),
])
def test_what_is_refused_says_how_to_write_it(text: str, field: str, says: str) -> None:
    with pytest.raises(InvalidField) as refused:
        read_command(text)
    assert refused.value.field == field and says in refused.value.message


async def test_the_author_or_a_chat_admin_changes_a_schedule_from_its_channel(db: str) -> None:
    made = await schedules.add(NewSchedule(HERE, "U1", "Summarize", "every day at 9:00"), NOW)
    policy = Policy.of(admins=["UADMIN"])
    with pytest.raises(NotYours):
        await schedules.change("pause", made.id, NOW, user="U2", policy=policy, where=HERE)
    with pytest.raises(NotFound):  # another channel does not see it
        await schedules.change("pause", made.id, NOW, user="U1", policy=policy,
                               where=Where(Platform.SLACK, "T1", "C2"))
    paused = await schedules.change("pause", made.id, NOW, user="U1", policy=policy, where=HERE)
    assert (paused.state, paused.next_run_at) == (ScheduleState.PAUSED, None)
    resumed = await schedules.change("resume", made.id, NOW, user="UADMIN", policy=policy,
                                     where=HERE)
    assert resumed.state is ScheduleState.ACTIVE
    assert resumed.next_run_at == datetime(2026, 12, 6, 9, tzinfo=UTC)
    await schedules.change("delete", made.id, NOW)  # an operator
    assert await schedules.in_channel(HERE) == []


async def test_a_new_schedule_is_checked_and_shown(db: str) -> None:
    with pytest.raises(InvalidField) as refused:
        await schedules.add(NewSchedule(HERE, "U1", "   ", "every day at 9:00"), NOW)
    assert refused.value.field == "prompt"
    with pytest.raises(InvalidField) as refused:
        await schedules.add(NewSchedule(HERE, "U1", "Hi", "every day at 9:00", "Nowhere/City"),
                            NOW)
    assert refused.value.field == "timezone"
    with pytest.raises(InvalidField) as refused:
        await schedules.add(NewSchedule(HERE, "U1", "Hi", "every day at 9:00", "UTC", "twice"),
                            NOW)
    assert refused.value.field == "misfire"
    made = await schedules.add(NewSchedule(HERE, "U1", "Sum\x00marize " + "x" * 5000,
                                           "every weekday at 9:00", "Asia/Tokyo", "skip"), NOW)
    assert made.misfire is Misfire.SKIP and len(made.prompt) == 4000 and "\x00" not in made.prompt
    assert schedules.line(made, "@ann").startswith(
        f"#{made.id} · At 09:00, Monday through Friday (Asia/Tokyo) · next Mon 07 Dec 2026 "
        "09:00 Asia/Tokyo · misfire skip · by @ann · Sum")
    assert schedules.history_words(await schedules.detail(made.id))[1] == "No run yet."
