"""`/hermes schedule add|list|pause|resume|delete|history` on Discord: answered privately, a new
schedule noted in the channel, every mistake said in plain words."""

from __future__ import annotations

from datetime import timedelta

from core.conversation.scheduled_prompts import ScheduledPrompts
from core.runtime.pool import RunPool
from core.store.models import Misfire, Platform, Schedule, ScheduleState
from tests.bots.discord.harness import bot_messages, reply_of, running_bot, text_of
from tests.fakes.discordfake import FakeDiscord, InteractionRecord
from tests.fakes.changes import WAIT


def ephemeral(fake: FakeDiscord, record: InteractionRecord) -> bool:
    return bool(fake.message(record.original_message_id)["flags"] & 64)


async def said(fake: FakeDiscord, *path: str, **options: object) -> tuple[str, bool]:
    """The reply to `/hermes schedule <path>` in the channel, and whether it was private."""
    user = options.pop("user", None)
    channel = options.pop("channel_id", None)
    record = await fake.run_command("hermes", "schedule", *path, options=options,
                                    user=user, channel_id=channel)  # type: ignore[arg-type]
    return text_of(await reply_of(fake, record, WAIT)), ephemeral(fake, record)


async def test_schedules_are_made_listed_and_changed_privately(
        fake: FakeDiscord, fake_runs: RunPool) -> None:
    async with running_bot(fake, fake_runs, schedule_timezone="Europe/Berlin") as bot:
        text, private = await said(fake, "add", when="every weekday at 9:00",
                                   prompt="Summarize the open PRs")
        [made] = await Schedule.all()
        assert private and f"Scheduled #{made.id}: At 09:00, Monday through Friday " \
                           "(Europe/Berlin)" in text
        assert (made.platform, made.workspace, made.channel, made.author) == (
            Platform.DISCORD, str(fake.guild_id), str(fake.world.channel_id), fake.user["id"])
        await fake.wait_until(lambda: any("scheduled a prompt here" in text_of(m)
                                          for m in bot_messages(fake, fake.world.channel_id)),
                              WAIT, "the note in the channel")

        text, _ = await said(fake, "add", when="daily at 7am", prompt="Plan", tz="Asia/Tokyo",
                             misfire="skip")
        second = await Schedule.get(prompt="Plan")
        assert (second.timezone, second.misfire) == ("Asia/Tokyo", Misfire.SKIP)
        listed, private = await said(fake, "list")
        assert private and f"#{made.id} · At 09:00" in listed and f"#{second.id} · At 07:00" in listed

        bob = fake.world.add_user("bob")
        refused, private = await said(fake, "pause", id=made.id, user=bob)
        assert private and "who asked, or a chat admin" in refused
        assert (await Schedule.get(id=made.id)).state is ScheduleState.ACTIVE
        assert "Paused schedule" in (await said(fake, "pause", id=made.id))[0]
        assert "Resumed schedule" in (await said(fake, "resume", id=made.id))[0]
        assert "No run yet." in (await said(fake, "history", id=made.id))[0]
        assert "Deleted schedule" in (await said(fake, "delete", id=second.id))[0]
        assert await Schedule.all().count() == 1
        due = made.next_run_at + timedelta(seconds=1)
        prompts = ScheduledPrompts(fake_runs, bot.files, clock=lambda: due)
        prompts.serve(Platform.DISCORD, bot.scheduled_threads)
        [run] = await prompts.due()
        history, _ = await said(fake, "history", id=made.id)
        assert f"started · thread <#{run.thread}>" in history
        await fake.wait_until(lambda: any("done" in text_of(m)
                                          for m in bot_messages(fake, run.thread)),
                              WAIT, "the scheduled run's answer")


async def test_mistakes_are_said_privately_and_change_nothing(
        fake: FakeDiscord, fake_runs: RunPool) -> None:
    async with running_bot(fake, fake_runs):
        for options, says in [
            ({"when": "every funday at 9", "prompt": "Hi"}, "'funday' as days"),
            ({"when": "daily at 9", "prompt": "Hi", "tz": "Mars/Base"}, "is no time zone"),
            ({"when": "* * * * *", "prompt": "Hi"}, "more often than every 5 minutes"),
            ({"when": "daily at 9", "prompt": "   "}, "The prompt is empty"),
        ]:
            text, private = await said(fake, "add", **options)
            assert private and says in text, options
        text, private = await said(fake, "pause", id=42)
        assert private and "There is no schedule 42" in text
        dm = fake.world.dm_channel(fake.user)
        text, private = await said(fake, "add", when="daily at 9", prompt="Hi",
                                   channel_id=dm["id"])
        assert "Schedules post in a server's text channel" in text
    assert await Schedule.all().count() == 0
