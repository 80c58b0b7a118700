"""Scheduled prompts on Slack: `/hermes schedule …` in a channel, and the thread each occurrence
opens there (`SlackScheduledThreads`, core's port: the prompt posted by the bot, naming who
scheduled it; the run is theirs and shows in the thread as any turn).

A new schedule's time zone is `tz=` if given, else the person's own in Slack (users.info),
else SCHEDULE_TIMEZONE.
"""

from __future__ import annotations

import functools
import logging

from slack_sdk.errors import SlackApiError

from core.conversation import schedules
from core.conversation.scheduled_prompts import OpenedThread
from core.conversation.schedules import ScheduleCommand
from core.conversation.vocabulary import NewSchedule, Platform, Schedule, ScheduleWhere, ThreadKey
from core.errors import HermesChatError, InvalidInput

from ..fields import obj
from .delivery import budgets
from .inbound import is_dm
from .intake import to_user
from .render.blocks import Payload, section
from .render.mrkdwn import escape
from .services import SlackServices

log = logging.getLogger(__name__)
IN_A_CHANNEL = ("Schedules post in a channel: use `/hermes schedule` in the channel where "
                "its threads should start.")


def _text(text: str) -> Payload:
    return Payload(text, [section(text)])


class SlackSchedules:
    """What `/hermes schedule …` does on Slack; the private answer it gives."""

    def __init__(self, services: SlackServices, default_timezone: str) -> None:
        self._services = services
        self._default_timezone = default_timezone

    async def command(self, text: str, team: str, channel: str, user: str) -> Payload:
        if is_dm(channel):
            raise InvalidInput(IN_A_CHANNEL)
        command = schedules.read_command(text)
        where = ScheduleWhere(Platform.SLACK, team, channel)
        now = self._services.pool.limits.clock()
        if command.action == "add":
            return await self._add(command, where, user)
        if command.action == "list":
            found = await schedules.in_channel(where)
            lines = [schedules.line(s, f"<@{s.author}>", escape) for s in found]
            return _text("\n".join(["*Schedules in this channel*", *lines])
                         if lines else "No schedule in this channel yet.")
        assert command.schedule_id is not None
        if command.action == "history":
            found_one = await schedules.detail(command.schedule_id, where)
            return _text("\n".join(map(escape, schedules.history_words(found_one))))
        changed = await schedules.change(command.action, command.schedule_id, now, user=user,
                                         policy=self._services.policy, where=where)
        return _text(escape(schedules.changed_words(command.action, changed)))

    async def _add(self, command: ScheduleCommand, where: ScheduleWhere, user: str) -> Payload:
        zone = command.options.get("tz") or await self._timezone(where.workspace, user)
        new = NewSchedule(where, user, command.prompt, command.when, zone,
                          command.options.get("misfire", "run_once"))
        made = await schedules.add(new, self._services.pool.limits.clock())
        note = (f"⏰ <@{user}> scheduled a prompt here: "
                f"{escape(schedules.when_words(made))} (#{made.id}).")
        services = self._services

        async def tell_the_channel() -> None:  # it waits for the channel's budget, not the ack
            await services.sender.post(where.workspace, where.channel, None, _text(note))

        services.background.spawn(tell_the_channel(), to_user(
            services.sender, where.workspace, where.channel, user), f"schedule {made.id} noted")
        return _text(escape(schedules.added_words(made)))

    async def _timezone(self, team: str, user: str) -> str:
        """The person's time zone in Slack, else the default."""
        sender = self._services.sender
        try:
            response = await sender.read(budgets.users(team), functools.partial(
                sender.client.users_info, user=user))
        except SlackApiError as error:
            log.info("slack: no time zone of %s (%s): %s", user, error.response.get("error"),
                     self._default_timezone)
            return self._default_timezone
        return str(obj(response.get("user")).get("tz") or self._default_timezone)


class SlackScheduledThreads:
    """Core's `ScheduledThreads` on Slack."""

    def __init__(self, services: SlackServices) -> None:
        self._services = services

    async def may_talk(self, schedule: Schedule) -> bool:
        return self._services.policy.may_talk(schedule.author)

    async def open(self, schedule: Schedule) -> OpenedThread:
        """The prompt as a message of the bot's in the channel; its thread is the occurrence's."""
        text = (f"⏰ Scheduled by <@{schedule.author}> (#{schedule.id}, "
                f"{escape(schedules.when_words(schedule))}):\n{escape(schedule.prompt)}")
        try:
            ts = await self._services.sender.post(schedule.workspace, schedule.channel, None,
                                                  _text(text))
        except SlackApiError as error:  # said in the schedule's history
            code = error.response.get("error") if error.response is not None else None
            raise HermesChatError(f"Slack refused the post in the channel ({code}): is the "
                                  "bot still in it?") from error
        key = ThreadKey(Platform.SLACK, schedule.workspace, schedule.channel, ts)
        return OpenedThread(key, ts)

    async def tell(self, opened: OpenedThread, text: str) -> None:
        key = opened.key
        await self._services.sender.post(key.workspace, key.channel, key.thread,
                                         _text(escape(text)))
