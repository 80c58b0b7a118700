"""The thread's loading status (assistant.threads.setStatus with `loading_messages`): what
the agent does, shown where no live message shows it. The least valuable call a turn makes:
sent only when its budget has room now, skipped silently where the workspace refuses it
(logged once), and cleared by Slack when the bot replies in the thread."""

from __future__ import annotations

import logging

from slack_sdk.errors import SlackApiError

from core.runtime.updates import RunUpdate

from .features import STATUS
from .live_view import loading_line
from .refs import Slot
from .services import Services

log = logging.getLogger(__name__)
WORKING = "is working…"


class LoadingStatus:
    def __init__(self, services: Services, slot: Slot) -> None:
        self._services = services
        self._slot = slot
        self._shown: str | None = None

    async def show(self, update: RunUpdate) -> None:
        slot, features = self._slot, self._services.features
        line = loading_line(update)
        if slot.thread_ts is None or line == self._shown or not features.has(slot.team, STATUS):
            return
        try:
            sent = await self._services.sender.set_status(slot.team, slot.channel, slot.thread_ts,
                                                          WORKING, [line])
        except SlackApiError as error:
            if not features.refused(slot.team, STATUS, error):
                log.info("loading status not set: %s", error.response.get("error"))
            return
        if sent:
            self._shown = line

    def replied(self) -> None:
        """The bot replied in the thread, which clears the status."""
        self._shown = None
