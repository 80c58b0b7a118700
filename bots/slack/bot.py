"""SlackBot: the Slack adapter, built at the composition root and handed its collaborators."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import aiohttp
from litestar.handlers import HTTPRouteHandler
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from core.bridge_port import Bridge
from core.catalogue import Catalogue
from core.config import Settings
from core.ratelimit import RateLimiter
from core.runtime.pool import RunPool

from .answer_listeners import AnswerListeners
from .clarify_listeners import ClarifyListeners
from .command_listener import CommandListener
from .commands import Commands
from .conversation import Conversations
from .event_listeners import EventListeners
from .follower import RunFollower
from .http import events_route
from .insight_listeners import InsightListeners
from .sender import SlackSender
from .services import Services
from .session_listeners import SessionListeners

log = logging.getLogger(__name__)
API_TIMEOUT = 30.0  # seconds, slack_sdk's own default


class SlackBot:
    """Serves Slack over HTTP (`route_handlers()`) or Socket Mode (SLACK_APP_TOKEN)."""

    def __init__(self, settings: Settings, pool: RunPool, catalogue: Catalogue, bridge: Bridge,
                 limiter: RateLimiter | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 api_timeout: float = API_TIMEOUT) -> None:
        self._settings = settings
        self._api_timeout = api_timeout
        self.client = AsyncWebClient(token=settings.slack_bot_token, base_url=settings.slack_api_url)
        self.app = AsyncApp(
            name="hermes-chat", client=self.client,
            signing_secret=settings.slack_signing_secret or "",
            request_verification_enabled=bool(settings.slack_signing_secret),
            process_before_response=True,  # listeners ack at once and start tracked tasks
        )
        sender = SlackSender(self.client, limiter or RateLimiter(clock))
        self.services = Services(pool, catalogue, bridge, sender)
        self.follower = RunFollower(self.services)
        self._socket: AsyncSocketModeHandler | None = None
        _register(self.app, self.services)

    def route_handlers(self) -> list[HTTPRouteHandler]:
        """The Litestar route of the Events / Interactivity / slash command request URL."""
        return [events_route(self.app)]

    async def start(self) -> None:
        """Follow the pool's runs; connect Socket Mode when an app token is configured."""
        # One connection pool for every call. slack_sdk ignores its own `timeout` on a session
        # it is given: a call that hangs past api_timeout counts as Slack being down (sender.py).
        self.client.session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=self._api_timeout))
        self.follower.start()
        if self._settings.slack_app_token:
            self._socket = AsyncSocketModeHandler(self.app, app_token=self._settings.slack_app_token,
                                                  web_client=self.client)
            await self._socket.connect_async()
            log.info("slack: connected in Socket Mode")

    async def stop(self) -> None:
        if self._socket is not None:
            await self._socket.close_async()
            self._socket = None
        await self.follower.stop()
        await self.services.background.close()
        if self.client.session is not None:
            await self.client.session.close()
            self.client.session = None

    async def idle(self) -> None:
        """Until the work of every event so far and every live message has ended (for tests
        and a graceful shutdown)."""
        await self.services.background.idle()
        await self.follower.idle()


def _register(app: AsyncApp, services: Services) -> None:
    commands = Commands(services)
    EventListeners(services, Conversations(services), commands).register(app)
    CommandListener(services, commands).register(app)
    ClarifyListeners(services).register(app)
    AnswerListeners(services).register(app)
    InsightListeners(services).register(app)
    SessionListeners(services).register(app)
