"""The app's Messages tab: opening it (`app_home_opened`, tab `messages`) offers the
suggested prompts of SLACK_SUGGESTED_PROMPTS (assistant.threads.setSuggestedPrompts, at most
four). A workspace or app that refuses them (an app not declared with the AI-app features)
goes without, said once in the log.
"""

from __future__ import annotations

import logging

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.errors import SlackApiError

from core.text.safe_text import shortened

from .delivery.sender import SUGGESTED_PROMPTS
from .inbound import HomeOpened
from .intake import typed, unheard
from .services import SlackServices

log = logging.getLogger(__name__)
MAX_PROMPTS = 4
TITLE = 75


def prompts(texts: tuple[str, ...]) -> list[dict[str, str]]:
    """The first four prompts: each a title (cut after a whole word) and the message it sends."""
    return [{"title": shortened(text, TITLE), "message": text} for text in texts[:MAX_PROMPTS] if text]


class ContainerListeners:
    def __init__(self, services: SlackServices, suggested: tuple[str, ...]) -> None:
        self._services = services
        self._prompts = prompts(suggested)

    def register(self, app: AsyncApp) -> None:
        app.event("app_home_opened")(self.on_home_opened)

    async def on_home_opened(self, context: AsyncBoltContext) -> None:
        opened = typed(context, HomeOpened)
        self._services.background.spawn(self._offer(opened), unheard, "suggested prompts")

    async def _offer(self, opened: HomeOpened) -> None:
        features = self._services.features
        if opened.tab != "messages" or not opened.channel or not self._prompts:
            return
        if not features.has(opened.team, SUGGESTED_PROMPTS):
            return
        try:
            await self._services.sender.suggest(opened.team, opened.channel, self._prompts)
        except SlackApiError as error:
            if not features.refused(opened.team, SUGGESTED_PROMPTS, error):
                log.warning("suggested prompts not set: %s", error.response.get("error"))
