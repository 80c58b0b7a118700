"""Clicks on a turn's message: Stop, Regenerate (Retry), the version switcher ◀ ▶, and 👍 / 👎."""

from __future__ import annotations

from slack_bolt.async_app import AsyncAck, AsyncApp

from core import feedback
from core.conversation import policy, turns, views
from core.conversation.refusals import FINISHED, SWITCH_BUSY
from core.errors import Busy, Conflict, NotFound
from core.models import Platform

from .. import ids, refs
from ..delivery.live import show_answer
from ..inbound import Click
from ..intake import to_clicker
from ..refs import Slot
from ..services import SlackServices
from . import click_listener, message_here, run_here


class AnswerListeners:
    def __init__(self, services: SlackServices) -> None:
        self._services = services

    def register(self, app: AsyncApp) -> None:
        services = self._services
        app.action(ids.STOP)(click_listener(services, self._stop, "stop", _asker_of_run))
        app.action(ids.REGENERATE)(click_listener(services, self._regenerate, "regenerate",
                                                  _asker_of_answer))
        app.action(ids.SWITCH_PATTERN)(click_listener(services, self._switch, "switch version",
                                                      _asker_of_shown))
        app.action(ids.POSITION)(self.on_position)
        app.action(ids.FEEDBACK)(click_listener(services, self._rate, "feedback"))  # open to all

    async def on_position(self, ack: AsyncAck) -> None:
        await ack()  # the "2/3" label is a button only to sit between the arrows

    async def _stop(self, clicked: Click) -> None:
        run_id = ids.parse_run(clicked.value)
        await run_here(clicked, run_id)
        try:
            update = await turns.stop(self._services.pool, run_id)
        except (Conflict, NotFound):
            await to_clicker(self._services.sender, clicked)(FINISHED)
            return
        slot = await refs.slot_of(update.message_id)
        if self._services.pool.view(run_id) is None and slot is not None and slot.ts is not None:
            await show_answer(self._services, update, slot)  # no run of ours will show its end

    async def _regenerate(self, clicked: Click) -> None:
        (message_id,) = ids.unpack(clicked.value, 1)
        await message_here(clicked, message_id)
        slot = await self._slot(message_id, clicked)
        await self._services.pool.regenerate(message_id, author=clicked.user,
                                             platform_refs=slot.moved(final=False).to_refs())

    async def _switch(self, clicked: Click) -> None:
        current, target = ids.unpack(clicked.value, 2)
        await message_here(clicked, current)
        await message_here(clicked, target)
        slot = await self._slot(current, clicked)
        own = await refs.slot_of(target)
        try:
            await turns.switch_version(target)
        except Busy:
            await to_clicker(self._services.sender, clicked)(SWITCH_BUSY)
            return
        update = await views.stored_update(target)
        await show_answer(self._services, update, slot.moved(branched=own.branched if own else slot.branched))

    async def _slot(self, message_id: int, clicked: Click) -> Slot:
        """The message the click came from (its refs, else the click's own coordinates)."""
        slot = await refs.slot_of(message_id)
        if slot is not None and slot.ts is not None:
            return slot
        if not clicked.channel or not clicked.message_ts:
            raise NotFound("the message of this answer is unknown")
        return Slot(clicked.team, clicked.channel, clicked.thread_ts, clicked.message_ts)

    async def _rate(self, clicked: Click) -> None:
        """👍 / 👎 under an answer (a `feedback_buttons` element): stored as the clicker's
        rating of that assistant message, replacing an earlier one, and acknowledged to them
        alone."""
        kind, message_id = ids.parse_feedback(clicked.value)
        await message_here(clicked, message_id)
        value = feedback.value_of(kind)
        await feedback.give(message_id, Platform.SLACK, clicked.user, value)
        await to_clicker(self._services.sender, clicked)(feedback.THANKS[value])


async def _asker_of_run(clicked: Click) -> str | None:
    return await policy.asker_of_run(ids.parse_run(clicked.value))


async def _asker_of_answer(clicked: Click) -> str | None:
    return await policy.asker_of_message(ids.unpack(clicked.value, 1)[0])


async def _asker_of_shown(clicked: Click) -> str | None:
    """◀ ▶ carry the shown answer's id, then the target's."""
    return await policy.asker_of_message(ids.unpack(clicked.value, 2)[0])
