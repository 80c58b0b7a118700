"""Clicks on a busy notice: the author of a message refused while the thread's answer was
being written (or a chat admin) queues it after all, or gives it to that answer as guidance
(`core.conversation.turns.choose`). The notice then says what became of it; a choice that
meets a run not yet started (guidance) is refused again with a new notice."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from core.conversation import turns
from core.conversation.refusals import STEERED
from core.conversation.vocabulary import FileReader

from .. import ids
from ..inbound import Click, place_of
from ..intake import in_thread
from ..refs import Slot
from ..render.busy import busy_chosen, busy_notice
from ..services import SlackServices
from . import check_session, click_listener

CHOICES = {ids.BUSY_QUEUE: turns.QUEUE, ids.BUSY_STEER: turns.STEER}


class BusyListeners:
    def __init__(self, services: SlackServices, reader: FileReader) -> None:
        self._services = services
        self._reader = reader

    def register(self, app: AsyncApp) -> None:
        for action_id in CHOICES:
            app.action(action_id)(click_listener(self._services, self._choose, "busy choice"))

    async def _choose(self, clicked: Click) -> None:
        (parked,) = ids.unpack(clicked.value, 1)
        await check_session(clicked, await turns.parked_session(parked))
        choice, services = CHOICES[clicked.action_id], self._services
        thread = clicked.thread_ts or clicked.message_ts
        refs = Slot(clicked.team, clicked.channel or "", thread).to_refs()
        taken = await turns.choose(services.pool, parked, choice, clicked.user, services.policy,
                                   self._reader, refs)
        if clicked.channel and clicked.message_ts:
            notice = busy_chosen(choice, clicked.user) if taken.busy is None else \
                busy_notice("", taken.running, taken.parked)
            await services.sender.edit(clicked.team, clicked.channel, clicked.message_ts,
                                       lambda: notice)
        if taken.steered and clicked.channel and thread:
            place = place_of(clicked.team, clicked.channel, thread, thread)
            await in_thread(services.sender, place)(STEERED)

