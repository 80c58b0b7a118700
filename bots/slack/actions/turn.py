"""Clicks on a turn's message: Stop (and the native Stop of Slack's agent session, through the
same rule), Regenerate (Retry), the version switcher ◀ ▶, and 👍 / 👎."""

from __future__ import annotations

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext

from core.conversation import bindings, feedback, policy, turns, views
from core.conversation.refusals import FINISHED, SWITCH_BUSY
from core.conversation.vocabulary import Platform, Policy
from core.errors import Busy, Conflict, NotFound, NotYours

from .. import ids, refs
from ..delivery.agent_session import settle
from ..delivery.live import show_answer
from ..inbound import Click, SessionStopped, place_of
from ..intake import refusal, to_clicker, typed, unheard
from ..refs import Slot
from ..services import SlackServices
from . import click_listener, message_here, run_here


class AnswerListeners:
    def __init__(self, services: SlackServices) -> None:
        self._services = services

    def register(self, app: AsyncApp) -> None:
        services = self._services
        app.action(ids.STOP)(click_listener(services, self._stop, "stop", _on_run))
        app.action(ids.REGENERATE)(click_listener(services, self._regenerate, "regenerate",
                                                  _on_answer))
        app.action(ids.SWITCH_PATTERN)(click_listener(services, self._switch, "switch version",
                                                      _on_shown))
        app.action(ids.POSITION)(self.on_position)
        app.action(ids.FEEDBACK)(click_listener(services, self._rate, "feedback"))  # open to all
        app.event("agent_session_stopped")(self.on_session_stopped)

    async def on_session_stopped(self, context: AsyncBoltContext) -> None:
        """The native Stop of Slack's agent session: the thread's run in flight stops through
        the same Stop as our button, for the same people (who may act); with no run in flight
        the session is set active again, which Slack leaves to the app."""
        stopped = typed(context, SessionStopped)
        self._services.background.spawn(self._native_stop(stopped), unheard,
                                        f"native stop in {stopped.channel}/{stopped.thread_ts}")

    async def on_position(self, ack: AsyncAck) -> None:
        await ack()  # the "2/3" label is a button only to sit between the arrows

    async def _stop(self, clicked: Click) -> None:
        run_id = ids.parse_run(clicked.value)
        await run_here(clicked, run_id)
        if not await stop_run(self._services, run_id):
            await to_clicker(self._services.sender, clicked)(FINISHED)

    async def _regenerate(self, clicked: Click) -> None:
        (message_id,) = ids.unpack(clicked.value, 1)
        await message_here(clicked, message_id)
        await self._slot(message_id, clicked)  # the new version shows in the same message
        await turns.regenerate(self._services.pool, message_id, author=clicked.user)

    async def _switch(self, clicked: Click) -> None:
        current, target = ids.unpack(clicked.value, 2)
        await message_here(clicked, current)
        await message_here(clicked, target)
        slot = await self._slot(current, clicked)
        try:
            await turns.switch_version(target)
        except Busy:
            await to_clicker(self._services.sender, clicked)(SWITCH_BUSY)
            return
        await show_answer(self._services, await views.stored_update(target), slot)

    async def _slot(self, message_id: int, clicked: Click) -> Slot:
        """Where the turn of the clicked answer shows: its record, else the click's own
        coordinates, recorded for the turn (a message the record lost or never had)."""
        slot = await refs.slot_of(message_id)
        if slot is not None and slot.ts is not None:
            return slot
        if not clicked.channel or not clicked.message_ts:
            raise NotFound("the message of this answer is unknown")
        slot = Slot(clicked.team, clicked.channel, clicked.thread_ts, clicked.message_ts,
                    branched=slot.branched if slot else False)
        await refs.save_slot(message_id, slot)
        return slot

    async def _rate(self, clicked: Click) -> None:
        """👍 / 👎 under an answer (a `feedback_buttons` element): stored as the clicker's
        rating of that assistant message, replacing an earlier one, and acknowledged to them
        alone."""
        kind, message_id = ids.parse_feedback(clicked.value)
        await message_here(clicked, message_id)
        thanks = await feedback.rate(message_id, Platform.SLACK, clicked.user, kind)
        await to_clicker(self._services.sender, clicked)(thanks)

    async def _native_stop(self, stopped: SessionStopped) -> None:
        services = self._services
        place = place_of(stopped.team, stopped.channel, stopped.thread_ts, stopped.thread_ts)
        session = await bindings.bound_session(place.key)
        run_id = await turns.run_in_flight(session.id) if session is not None else None
        if run_id is not None:
            try:
                await policy.check_act_on_run(services.policy, stopped.user, run_id)
            except NotYours as refused:
                await services.sender.ephemeral(stopped.team, stopped.channel, stopped.user,
                                                refusal(refused), stopped.thread_ts)
                return
        if run_id is None or not await stop_run(services, run_id):
            await settle(services, Slot(stopped.team, stopped.channel, stopped.thread_ts))


async def stop_run(services: SlackServices, run_id: str) -> bool:
    """Stop run `run_id` (our Stop button and the agent session's native Stop: one rule). It
    stops on whichever replica drives it (`core.conversation.turns.stop`); when no run of this
    process will show its end, its message is given the end here. False when it had already
    ended (or never was)."""
    try:
        stopped = await turns.stop_shown(services.pool, run_id)
    except (Conflict, NotFound):
        return False
    if stopped.show_end and (slot := await refs.slot_of(stopped.update.message_id)) is not None \
            and slot.ts is not None:
        await show_answer(services, stopped.update, slot)
    return True


async def _on_run(rules: Policy, clicked: Click) -> None:
    await policy.check_act_on_run(rules, clicked.user, ids.parse_run(clicked.value))


async def _on_answer(rules: Policy, clicked: Click) -> None:
    await policy.check_act_on_message(rules, clicked.user, ids.unpack(clicked.value, 1)[0])


async def _on_shown(rules: Policy, clicked: Click) -> None:
    """◀ ▶ carry the shown answer's id, then the target's."""
    await policy.check_act_on_message(rules, clicked.user, ids.unpack(clicked.value, 2)[0])
