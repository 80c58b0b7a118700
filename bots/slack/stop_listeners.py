"""The native Stop of Slack's agent session (`agent_session_stopped`): the thread's run in
flight stops through the same Stop as our button (stopping.py, from any replica). With no
run in flight the session is set active again, which Slack leaves to the app."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext

from core.conversation import bindings, turns

from .agent_sessions import settle
from .inbound import SessionStopped
from .intake import typed
from .places import place_of
from .refs import Slot
from .replies import unheard
from .services import Services
from .stopping import stop_run


class StopListeners:
    def __init__(self, services: Services) -> None:
        self._services = services

    def register(self, app: AsyncApp) -> None:
        app.event("agent_session_stopped")(self.on_stopped)

    async def on_stopped(self, context: AsyncBoltContext) -> None:
        stopped = typed(context, SessionStopped)
        self._services.background.spawn(self._stop(stopped), unheard,
                                        f"native stop in {stopped.channel}/{stopped.thread_ts}")

    async def _stop(self, stopped: SessionStopped) -> None:
        place = place_of(stopped.team, stopped.channel, stopped.thread_ts, stopped.thread_ts)
        session = await bindings.bound_session(place.key)
        run_id = await turns.run_in_flight(session.id) if session is not None else None
        if run_id is None or not await stop_run(self._services, run_id):
            await settle(self._services, Slot(stopped.team, stopped.channel, stopped.thread_ts))
