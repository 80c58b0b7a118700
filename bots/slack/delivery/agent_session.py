"""A turn's agent session (Slack's agent container, for an app declared as an agent): the
thread's session is `processing` while a run is in flight, which shows Slack's native Stop
button (its `agent_session_stopped` runs through the same Stop as ours: actions/turn.py),
and `active` once the run ends, by the stream's own chat.stopStream where the turn streamed
(`session_status`), else agents.sessions.setStatus. The thread's title follows its session's
title (agents.sessions.rename; assistant.threads.setTitle in a DM, the assistant's threads).

An app not declared as an agent gets `not_authorized`: every later turn of the workspace
skips these calls, said once in the log (sender.WorkspaceFeatures). `processing` goes out only when its
budget has room now (like the loading status) beyond the `active` calls the open sessions
were promised (sender.Promises); `active` then always follows, at once, since a session left
`processing` would show a Stop for a run that has ended: in a burst, sessions are opened only
as many as the workspace's budget can close again when their turns end.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable

from slack_sdk.errors import SlackApiError

from core.conversation import titles
from core.text.safe_text import shortened

from ..refs import Slot
from ..services import SlackServices
from . import budgets
from .sender import AGENT_SESSIONS, THREAD_TITLES

log = logging.getLogger(__name__)
PROCESSING, ACTIVE = "processing", "active"
MAX_TITLE = 200  # Slack's limit on a session's title


class AgentSession:
    def __init__(self, services: SlackServices, session_id: int) -> None:
        self._services = services
        self._session_id = session_id
        self._opened = False  # `processing` was sent: the thread has a session
        self._pending = False  # ... and it still shows processing
        self._owed: list[budgets.Budget] = []  # the `active` call promised to its end

    async def processing(self, slot: Slot, initiator: str | None) -> None:
        """The run is in flight: the session shows it, with the native Stop."""
        if slot.thread_ts is None or not self._services.features.has(slot.team, AGENT_SESSIONS):
            return
        title = await self._title()
        self._opened = await _call(
            self._services, slot, AGENT_SESSIONS, self._services.sender.session_status(
                slot.team, slot.channel, slot.thread_ts, PROCESSING, title, initiator, now=True))
        if self._opened:
            self._owed = budgets.session_status(slot.team)
            self._services.sender.promised.promise(self._owed)
            self._pending = True

    def refused(self, team: str) -> bool:
        """Whether the workspace refuses agent sessions: Slack shows no native Stop there."""
        return not self._services.features.has(team, AGENT_SESSIONS)

    def ends_with_stream(self) -> str | None:
        """The `session_status` the turn's chat.stopStream carries (None: no session to
        move). Once that stop went through, `stream_ended` says so."""
        return ACTIVE if self._pending else None

    def stream_ended(self) -> None:
        self._pending = False
        self.release()

    def release(self) -> None:
        """The promise of its `active` call kept (or the turn gone)."""
        if self._owed:
            self._services.sender.promised.settle(self._owed)
            self._owed = []

    async def ended(self, slot: Slot) -> None:
        """The run has ended: the session is active again (unless the stream's stop said
        so already), and the thread titled as its session is now."""
        try:
            if self._pending:
                self._pending = False
                await settle(self._services, slot)
        finally:
            self.release()  # once its call is sent: no session opened meanwhile takes it
        await self._retitle(slot)

    async def _retitle(self, slot: Slot) -> None:
        thread, sender = slot.thread_ts, self._services.sender
        if thread is None:
            return
        title = await titles.to_show(self._services.titles, (slot.team, slot.channel, thread),
                                     self._session_id)
        if title is None:
            return
        title = shortened(title, MAX_TITLE)
        if self._opened and self._services.features.has(slot.team, AGENT_SESSIONS):
            await _call(self._services, slot, AGENT_SESSIONS, sender.rename_session(
                slot.team, slot.channel, thread, title))
        if slot.channel.startswith("D") and self._services.features.has(slot.team, THREAD_TITLES):
            await _call(self._services, slot, THREAD_TITLES, sender.set_title(slot.team, slot.channel,
                                                                   thread, title))

    async def _title(self) -> str | None:
        title = await titles.title_of(self._session_id)
        return shortened(title, MAX_TITLE) if title else None


async def settle(services: SlackServices, slot: Slot) -> None:
    """The thread's session is active again: a turn ended, or the native Stop was pressed
    while no run was in flight (Slack leaves the status to the app)."""
    if slot.thread_ts is None or not services.features.has(slot.team, AGENT_SESSIONS):
        return
    await _call(services, slot, AGENT_SESSIONS, services.sender.session_status(
        slot.team, slot.channel, slot.thread_ts, ACTIVE, None, None, now=False))


async def _call(services: SlackServices, slot: Slot, feature: str, call: Awaitable[object]) -> bool:
    """Await `call`; a refusal is remembered (logged once), any other error logged: the agent
    container is never worth breaking a turn over. Whether it went through."""
    try:
        result = await call
    except SlackApiError as error:
        if not services.features.refused(slot.team, feature, error):
            log.warning("%s call failed: %s", feature, error.response.get("error"))
        return False
    return result is not False
