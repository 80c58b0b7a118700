"""Scheduled prompts on Discord: `/hermes schedule add|list|pause|resume|delete|history` in a
text channel (answered privately; a new schedule is also noted in the channel), and the thread
each occurrence opens there (`DiscordScheduledThreads`, core's port): the bot posts the prompt,
naming who scheduled it, and opens a thread on that message, as a mention in the channel does.

Discord knows nobody's time zone: a new schedule's is `tz`, else SCHEDULE_TIMEZONE. Used in a
thread, a schedule is the thread's channel's.
"""

from __future__ import annotations

import logging
from typing import Literal

import discord
from discord import app_commands

from bots.discord.commands import forum_of, place_of
from bots.discord.conversation import ARCHIVE_AFTER_MINUTES, Place
from bots.discord.render.titles import thread_name
from bots.discord.services import DiscordServices, services_of
from core.conversation import schedules
from core.conversation.scheduled_prompts import OpenedThread
from core.conversation.vocabulary import NewSchedule, Platform, Schedule, ScheduleWhere
from core.errors import HermesChatError, InvalidInput

log = logging.getLogger(__name__)
IN_A_CHANNEL = ("Schedules post in a server's text channel: use `/hermes schedule` in the "
                "channel where its threads should start.")
LIMIT = 2000  # characters of a Discord message
ID = "The schedule's number (/hermes schedule list shows them)"


async def _where(interaction: discord.Interaction, services: DiscordServices) -> ScheduleWhere:
    place = await place_of(interaction, services)
    if place.is_dm or place.guild is None or forum_of(interaction.channel) is not None:
        raise InvalidInput(IN_A_CHANNEL)
    return ScheduleWhere(Platform.DISCORD, str(place.guild), str(place.channel))


async def _private(interaction: discord.Interaction, lines: list[str]) -> None:
    text = "\n".join(lines)
    await interaction.response.send_message(text[:LIMIT], ephemeral=True)


class ScheduleCommands(app_commands.Group, name="schedule",
                       description="Prompts that run on a schedule in this channel"):
    @app_commands.command(name="add", description="Run a prompt on a schedule, each time in a new thread here")
    @app_commands.describe(
        when='When it runs: "every weekday at 9:00", "every 2 hours", or cron "0 9 * * 1-5"',
        prompt="What the agent is asked each time, as you would ask it",
        tz="A time zone such as Europe/Paris (default: the bot's SCHEDULE_TIMEZONE)",
        misfire="A time missed while the bot was down: run it once, or skip it")
    async def add(self, interaction: discord.Interaction, when: str, prompt: str,
                  tz: str | None = None,
                  misfire: Literal["run_once", "skip"] = "run_once") -> None:
        services = services_of(interaction)
        where = await _where(interaction, services)
        user = str(interaction.user.id)
        new = NewSchedule(where, user, prompt, when, tz or services.schedule_timezone, misfire)
        made = await schedules.add(new, services.pool.limits.clock())
        await _private(interaction, [schedules.added_words(made)])
        channel = interaction.client.get_partial_messageable(int(where.channel))
        await channel.send(f"⏰ <@{user}> scheduled a prompt here: "
                           f"{schedules.when_words(made)} (#{made.id}).",
                           allowed_mentions=discord.AllowedMentions.none())

    @app_commands.command(name="list", description="The schedules of this channel")
    async def list(self, interaction: discord.Interaction) -> None:
        where = await _where(interaction, services_of(interaction))
        found = await schedules.in_channel(where)
        lines = [schedules.line(s, f"<@{s.author}>") for s in found]
        await _private(interaction, ["**Schedules in this channel**", *lines] if lines
                       else ["No schedule in this channel yet."])

    @app_commands.command(name="history", description="A schedule's latest runs")
    @app_commands.describe(id=ID)
    async def history(self, interaction: discord.Interaction, id: int) -> None:
        where = await _where(interaction, services_of(interaction))
        found = await schedules.detail(id, where)
        await _private(interaction, schedules.history_words(found, lambda t: f"<#{t}>"))

    @app_commands.command(name="pause", description="Pause a schedule of this channel")
    @app_commands.describe(id=ID)
    async def pause(self, interaction: discord.Interaction, id: int) -> None:
        await _change(interaction, "pause", id)

    @app_commands.command(name="resume", description="Resume a paused schedule")
    @app_commands.describe(id=ID)
    async def resume(self, interaction: discord.Interaction, id: int) -> None:
        await _change(interaction, "resume", id)

    @app_commands.command(name="delete", description="Delete a schedule (its threads stay)")
    @app_commands.describe(id=ID)
    async def delete(self, interaction: discord.Interaction, id: int) -> None:
        await _change(interaction, "delete", id)


async def _change(interaction: discord.Interaction, action: str, schedule_id: int) -> None:
    services = services_of(interaction)
    where = await _where(interaction, services)
    changed = await schedules.change(action, schedule_id, services.pool.limits.clock(),
                                     user=str(interaction.user.id),
                                     policy=services.intake.policy, where=where)
    await _private(interaction, [schedules.changed_words(action, changed)])


class DiscordScheduledThreads:
    """Core's `ScheduledThreads` on Discord, over REST (any replica, whichever shards it holds)."""

    def __init__(self, client: discord.Client, services: DiscordServices) -> None:
        self._client = client
        self._services = services

    async def may_talk(self, schedule: Schedule) -> bool:
        policy = self._services.intake.policy
        if policy.may_talk(schedule.author) or not policy.allowed_roles:
            return policy.may_talk(schedule.author)
        try:
            member = await self._client.http.get_member(int(schedule.workspace),
                                                        int(schedule.author))
        except discord.HTTPException as error:
            log.info("discord: no roles of %s (%s): not allowed", schedule.author, error.text)
            return False
        return policy.may_talk(schedule.author, [str(r) for r in member.get("roles", [])])

    async def open(self, schedule: Schedule) -> OpenedThread:
        channel = self._client.get_partial_messageable(int(schedule.channel))
        text = (f"⏰ Scheduled by <@{schedule.author}> (#{schedule.id}, "
                f"{schedules.when_words(schedule)}):\n{schedule.prompt}")
        try:
            posted = await channel.send(text[:LIMIT],
                                        allowed_mentions=discord.AllowedMentions.none())
            # REST alone: a message posted through a partial channel has no guild to open from
            thread = await self._client.http.start_thread_with_message(
                channel.id, posted.id, name=thread_name(schedule.prompt),
                auto_archive_duration=ARCHIVE_AFTER_MINUTES)
        except (discord.Forbidden, discord.NotFound) as error:  # said in the schedule's history
            raise HermesChatError(f"Discord refused the post or its thread ({error.text}): may "
                                  "the bot still write and open threads there?") from error
        place = Place(int(schedule.workspace), int(schedule.channel), int(thread["id"]))
        return OpenedThread(place.key(), str(posted.id))

    async def tell(self, opened: OpenedThread, text: str) -> None:
        channel = self._client.get_partial_messageable(int(opened.key.thread))
        await channel.send(text[:LIMIT], allowed_mentions=discord.AllowedMentions.none())
