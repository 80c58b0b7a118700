"""SlackBot: the Slack adapter, built at the composition root and handed its collaborators."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable
from datetime import timedelta

import aiohttp
from litestar.handlers import HTTPRouteHandler
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.web.async_client import AsyncWebClient

from core.config import Settings
from core.conversation.vocabulary import Bridge, Catalogue, FileReader, RunPool
from core.edge.platform_links import PlatformLink
from core.edge.ratelimit import RateLimiter
from core.edge.shared_budgets import budget_store

from . import ids
from .actions.approvals import ApprovalListeners
from .actions.clarify import ClarifyListeners
from .actions.thinking import InsightListeners
from .actions.busy import BusyListeners
from .actions.turn import AnswerListeners
from .commands import CommandListener, Commands
from .container import ContainerListeners
from .conversation import SlackConversations
from .delivery.budgets import StreamTurns
from .delivery.live import RunFollower
from .delivery.sender import SlackSender
from .files import SlackFiles
from .http import events_route
from .intake import RECOVERED, Background, ErrorBoundary, InboundMiddleware, reply_to, retired
from .services import SlackServices
from .schedules import SlackScheduledThreads, SlackSchedules
from .supervisor import PING_INTERVAL, SupervisedSocketModeHandler
from .thread_history import SlackThreadHistory

log = logging.getLogger(__name__)
API_TIMEOUT = 30.0  # seconds, slack_sdk's own default


class SlackBot:
    """Serves Slack over HTTP (`route_handlers()`) or Socket Mode (SLACK_APP_TOKEN).

    In Socket Mode `link` is told the connection's state; `socket_ping_interval` is how often
    slack_sdk checks the socket (bots/slack/supervisor.py).
    """

    def __init__(self, settings: Settings, pool: RunPool, catalogue: Catalogue, bridge: Bridge,
                 limiter: RateLimiter | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 api_timeout: float = API_TIMEOUT, *, link: PlatformLink | None = None,
                 socket_ping_interval: float = PING_INTERVAL,
                 files: FileReader | None = None) -> None:
        """`files`: the replica's file reader (`serve` shares one); by default the bot's own,
        closed by `stop()`."""
        self._settings = settings
        self._own_files = files is None
        self.files = files if files is not None else FileReader(settings.attachment_limits)
        self._api_timeout = api_timeout
        self.link = link or PlatformLink()
        self._ping_interval = socket_ping_interval
        self._clock = clock
        self.client = AsyncWebClient(token=settings.slack_bot_token, base_url=settings.slack_api_url)
        self.app = AsyncApp(
            name="hermes-chat", client=self.client,
            signing_secret=settings.slack_signing_secret or "",
            request_verification_enabled=False,  # the route checks it first (http.py)
            process_before_response=True,  # listeners ack at once and start tracked tasks
        )
        # On PostgreSQL every replica spends the workspace's one allowance (core/edge/shared_budgets.py).
        limiter = limiter or RateLimiter(clock, store=budget_store(settings.database_url))
        sender = SlackSender(self.client, limiter)
        boundary = ErrorBoundary(lambda inbound: reply_to(self.services.sender, inbound))
        self.services = SlackServices(pool, catalogue, bridge, sender, Background(boundary),
                                 settings.policy, usage=settings.usage_shown,
                                 stream_turns=StreamTurns(sleep=limiter.sleep))
        self.follower = RunFollower(self.services)
        self._socket: SupervisedSocketModeHandler | None = None
        self._recovering: asyncio.Task[None] | None = None
        self._connecting: asyncio.Task[None] | None = None
        _register(self.app, self.services, settings, self.files)
        self.app.error(boundary.on_error)  # the one error boundary (bots/slack/intake.py)
        self.scheduled_threads = SlackScheduledThreads(self.services)  # core's scheduled prompts

    def route_handlers(self) -> list[HTTPRouteHandler]:
        """The Litestar route of the Events / Interactivity / slash command request URL."""
        return [events_route(self.app, self._settings.slack_signing_secret, clock=self._clock)]

    async def start(self) -> None:
        """Follow the pool's runs; connect Socket Mode when an app token is configured (in
        the background: slack_sdk keeps trying while Slack is unreachable, and `serve` must
        not wait for it)."""
        # One connection pool for every call. slack_sdk ignores its own `timeout` on a session
        # it is given: a call that hangs past api_timeout counts as Slack being down (delivery/sender.py).
        self.client.session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=self._api_timeout))
        self.follower.start()
        self._recovering = asyncio.create_task(self._keep_recovering(), name="slack-intake")
        if self._settings.slack_app_token:
            self._socket = SupervisedSocketModeHandler(
                self.app, self._settings.slack_app_token, self.client, self.link,
                self._ping_interval)
            self._connecting = asyncio.create_task(self._socket.connect_async(),
                                                   name="slack-socket-mode")

    @property
    def socket_mode_connecting(self) -> bool:
        """Whether slack_sdk is still making the first Socket Mode connection (it tries until
        it has one, or until an error no retry can fix stops it)."""
        return self._connecting is not None and not self._connecting.done()

    async def recover(self) -> int:
        """Handle again each message whose handling a replica began but never finished (it
        died, or stopped with the work in flight: intake.py), INTAKE_RETRY_SECONDS after it
        came; how many there were. Each goes through the listeners as it came, marked
        `RECOVERED`: a turn written already starts nothing, a first sign posted is taken."""
        after = timedelta(seconds=self._settings.intake_retry_seconds)
        events = await self.services.ledger.unfinished("slack", after)
        for event_id, body in events:
            log.warning("slack: handling event %s again: the replica that took it never "
                        "finished it", event_id)
            try:
                response = await self.app.async_dispatch(AsyncBoltRequest(
                    body=body, headers={"content-type": "application/json"},
                    context={RECOVERED: True}))
            except Exception:  # noqa: BLE001 - one event never stops the others'
                log.exception("slack: event %s could not be handled again", event_id)
                response = None
            if response is None or response.status != 200:  # no listener took it: given up
                self.services.ledger.done("slack", event_id)
        return len(events)

    async def _keep_recovering(self) -> None:
        every = max(1.0, self._settings.intake_retry_seconds / 2)
        while True:
            try:
                await self.recover()
            except Exception as error:  # noqa: BLE001 - the database away: next time
                log.warning("slack: unfinished events not looked for: %s", error)
            await asyncio.sleep(every)

    async def stop(self) -> None:
        if self._recovering is not None:
            self._recovering.cancel()
            await asyncio.gather(self._recovering, return_exceptions=True)
            self._recovering = None
        if self._socket is not None:
            await self._socket.close_async()
            self._socket = None
        if self._connecting is not None:
            self._connecting.cancel()
            await asyncio.gather(self._connecting, return_exceptions=True)
            self._connecting = None
        await self.follower.stop()
        await self.services.background.close()
        await self.services.ledger.close()  # the events handled to their end: never again
        await self.services.sender.limiter.settled()  # a Retry-After still being told to the others
        if self.client.session is not None:
            await self.client.session.close()
            self.client.session = None
        if self._own_files:
            await self.files.close()

    async def idle(self) -> None:
        """Until the work of every event so far and every live message has ended (for tests
        and a graceful shutdown)."""
        await self.services.background.idle()
        await self.follower.idle()
        await self.services.ledger.flush()


def _register(app: AsyncApp, services: SlackServices, settings: Settings,
              reader: FileReader) -> None:
    app.use(InboundMiddleware(services.ledger))  # every listener gets its payload typed, or nothing at all
    commands = Commands(services, SlackSchedules(services, settings.schedule_timezone))
    files = SlackFiles(services.sender.client)
    history = SlackThreadHistory(services.sender)
    SlackConversations(services, commands, files, reader, history,
                       settings.thread_context_messages).register(app)
    CommandListener(services, commands).register(app)
    ClarifyListeners(services).register(app)
    ApprovalListeners(services).register(app)
    AnswerListeners(services).register(app)
    BusyListeners(services, reader).register(app)
    ContainerListeners(services, settings.slack_suggested_prompts).register(app)
    InsightListeners(services).register(app)
    app.action(re.compile(rf"^{re.escape(ids.OURS)}"))(retired)  # last: what no listener above took
