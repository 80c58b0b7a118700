"""`/hermes schedule …` on Slack: answered privately (a new schedule also noted in the channel),
in the person's own Slack time zone unless they name one, every mistake said in plain words."""

from __future__ import annotations

from bots.slack.schedules import IN_A_CHANNEL
from core.store.models import Misfire, Schedule, ScheduleState
from tests.bots.slack.harness import Harness, until
from tests.fakes.slack import FakeSlack
from tests.fakes.slack_payloads import CHANNEL_ID, DM_CHANNEL_ID, USER_ID


def channel_notes(slack: FakeSlack) -> list[str]:
    return [m.text for m in slack.history(CHANNEL_ID) if m.bot_id and not m.thread_ts]


async def test_a_schedule_in_the_persons_slack_time_zone_noted_in_the_channel(
        fh: Harness, fake_slack: FakeSlack) -> None:
    fake_slack.workspace.add_user(USER_ID, tz="Europe/Paris")
    said = (await fh.command('schedule "every weekday at 9:00" Summarize the open PRs'))["text"]
    [made] = await Schedule.all()
    assert (made.author, made.channel, made.prompt, made.cron, made.timezone) == (
        USER_ID, CHANNEL_ID, "Summarize the open PRs", "0 9 * * 1-5", "Europe/Paris")
    assert f"Scheduled #{made.id}: At 09:00, Monday through Friday (Europe/Paris), next " in said
    assert await until(lambda: channel_notes(fake_slack)) == [
        f"⏰ <@{USER_ID}> scheduled a prompt here: At 09:00, Monday through Friday "
        f"(Europe/Paris) (#{made.id})."]

    said = (await fh.command('schedule "daily at 7am" tz=America/New_York misfire=skip Plan'))
    second = await Schedule.get(prompt="Plan")
    assert (second.timezone, second.misfire) == ("America/New_York", Misfire.SKIP)
    listed = (await fh.command("schedule list"))["text"]
    assert f"#{made.id} · At 09:00, Monday through Friday (Europe/Paris)" in listed
    assert f"#{second.id} · At 07:00 (America/New_York)" in listed and f"by <@{USER_ID}>" in listed


async def test_mistakes_are_said_privately_and_change_nothing(fh: Harness,
                                                               fake_slack: FakeSlack) -> None:
    for text, says in [
        ('schedule "every funday at 9" Hi', "I can't read 'funday' as days"),
        ('schedule "every day at 9" tz=Mars/Base Hi', "'Mars/Base' is no time zone"),
        ("schedule every day at 9 Hi", "Put when it runs in double quotes"),
        ('schedule "* * * * *" Hi', "more often than every 5 minutes"),
        ('schedule "every day at 9"', "The prompt is empty"),
        ("schedule pause 99", "There is no schedule 99"),
        ("schedule resume x", "takes a schedule's number"),
    ]:
        assert says in (await fh.command(text))["text"], text
    await fh.bot.idle()
    assert await Schedule.all().count() == 0 and channel_notes(fake_slack) == []
    dm = await fh.command('schedule "every day at 9" Hi', channel=DM_CHANNEL_ID)
    assert IN_A_CHANNEL in dm["text"]


async def test_the_author_pauses_resumes_and_deletes_others_may_not(fh: Harness) -> None:
    await fh.command('schedule "every day at 9:00" Summarize')
    [made] = await Schedule.all()
    refused = (await fh.command(f"schedule pause {made.id}", user="U0OTHER"))["text"]
    assert "Only <@U0USER>" in refused
    assert (await Schedule.get(id=made.id)).state is ScheduleState.ACTIVE
    assert "⏸️ Paused schedule" in (await fh.command(f"schedule pause {made.id}"))["text"]
    assert "paused" in (await fh.command("schedule list"))["text"]
    assert "▶️ Resumed" in (await fh.command(f"schedule resume {made.id}"))["text"]
    history = (await fh.command(f"schedule history {made.id}"))["text"]
    assert f"Schedule #{made.id}: At 09:00 (UTC), next" in history and "No run yet." in history
    assert "🗑️ Deleted" in (await fh.command(f"schedule delete {made.id}"))["text"]
    assert "No schedule in this channel yet." in (await fh.command("schedule list"))["text"]


async def test_a_mention_saying_schedule_is_a_message_for_the_agent() -> None:
    from bots.slack.commands import mention_command, parse_command

    assert mention_command("schedule list") is None
    assert parse_command('schedule "daily at 9"  Two  spaces').argument == (
        '"daily at 9"  Two  spaces')
