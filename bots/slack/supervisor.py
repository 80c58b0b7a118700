"""Supervised Slack Socket Mode: slack_sdk's aiohttp client, telling a `PlatformLink` how its
connection is, stopping where connecting again cannot succeed, and counting what it drops.

slack_sdk reconnects by itself: on a CLOSE frame and a `disconnect` message at once, on a
socket gone silent (no pong) or closed under it when its monitor looks (every
`ping_interval` seconds), and it retries a failed connection every `ping_interval`. What it
does not do is give up: with a revoked app token it would ask for a new URL every ten seconds
forever. Here the errors of `apps.connections.open` that no retry can fix stop the client and
mark the link `down` with the reason. An exception in our handler never ends the connection
(slack_sdk runs each envelope in its own task and logs what it raises): an envelope that
raised, or that bolt answered with a 5xx, is logged here and counted as a dropped event, as is
a frame that is not JSON.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.adapter.socket_mode.async_internals import (
    run_async_bolt_app,
    send_async_response,
)
from slack_bolt.async_app import AsyncApp
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError
from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.web.async_client import AsyncWebClient

from core.edge.platform_links import PlatformLink

from .inbound import bolt_can_read
from .intake import unreadable

log = logging.getLogger(__name__)
PING_INTERVAL = 10.0  # seconds, slack_sdk's default: how often it checks the connection

# apps.connections.open errors that another try cannot fix, with what the operator must do.
FATAL_ERRORS = {
    "invalid_auth": "Slack refused SLACK_APP_TOKEN (invalid_auth)",
    "not_authed": "no app token reached Slack (not_authed)",
    "account_inactive": "the app's token belongs to a deleted workspace or user "
                        "(account_inactive)",
    "token_revoked": "SLACK_APP_TOKEN was revoked (token_revoked)",
    "token_expired": "SLACK_APP_TOKEN has expired (token_expired)",
    "not_allowed_token_type": "SLACK_APP_TOKEN must be an app-level token, xapp-... "
                              "(not_allowed_token_type)",
    "missing_scope": "SLACK_APP_TOKEN lacks the connections:write scope (missing_scope)",
}


class OneLinePerFailure(logging.Logger):
    """The logger slack_sdk's client is given (under slack_sdk's own, so at its level).
    slack_sdk logs each failed try to connect with its traceback, every `ping_interval` while
    Slack is unreachable: here the first try of each kind of failure is one warning line with
    no traceback, the same failure again goes to debug, and a connection (`reset`) makes the
    next failure news again."""

    PREFIX = "Failed to connect (error: "

    def __init__(self, retry_every: float) -> None:
        super().__init__("slack_sdk.socket_mode.aiohttp.supervised")
        self.parent = logging.getLogger("slack_sdk.socket_mode.aiohttp")
        self._retry_every = retry_every
        self._said: str | None = None

    def _log(self, level: int, msg: object, args: Any, exc_info: Any = None,
             *rest: Any, **options: Any) -> None:
        text = str(msg)
        if text.startswith("Failed to retrieve WSS URL"):
            level = logging.DEBUG  # the "Failed to connect" line that follows says it
        elif text.startswith(self.PREFIX):
            error = text.removeprefix(self.PREFIX).removesuffix("); Retrying...")
            level = logging.WARNING if error != self._said else logging.DEBUG
            self._said, exc_info = error, None
            msg, args = ("slack: Socket Mode cannot connect (%s); slack_sdk tries again "
                         "every %.0fs", (error, self._retry_every))
        if self.isEnabledFor(level):
            super()._log(level, msg, args, exc_info, *rest, **options)

    def reset(self) -> None:
        self._said = None


class SupervisedSocketModeClient(SocketModeClient):
    """slack_sdk's client; every (re)connection and failure to connect reaches `link`, and
    its failures to connect reach the log once each (`OneLinePerFailure`)."""

    def __init__(self, link: PlatformLink, **options: Any) -> None:
        super().__init__(**options)
        self.link = link
        self.failures = OneLinePerFailure(self.ping_interval)
        self.logger = self.failures

    async def connect(self) -> None:
        """slack_sdk's connect (it retries until it has a socket), between link reports."""
        if self.current_session is not None and not self.closed:
            reason = self._why_lost()
            log.warning("slack: Socket Mode %s; slack_sdk is reconnecting", reason)
            self.link.lost(reason)
        await super().connect()
        if not self.closed and self.current_session is not None \
                and not self.current_session.closed:
            log.info("slack: connected in Socket Mode")
            self.failures.reset()
            self.link.connected()

    async def issue_new_wss_url(self) -> str:
        try:
            return await super().issue_new_wss_url()
        except SlackApiError as error:
            code = str(error.response.get("error"))
            if code in FATAL_ERRORS:
                self._give_up(FATAL_ERRORS[code])
            else:
                self.link.lost(f"apps.connections.open failed: {code}")
            raise
        except Exception as error:  # Slack unreachable: slack_sdk tries again
            self.link.lost(f"apps.connections.open failed: {type(error).__name__}: {error}")
            raise

    async def process_message(self) -> None:
        try:
            await super().process_message()
        except ValueError as error:  # json.loads of a frame that starts like JSON but is not
            log.warning("slack: dropped a Socket Mode frame that is not JSON (%s)", error)
            self.link.dropped_event()

    def _give_up(self, reason: str) -> None:
        log.error("slack: Socket Mode stopped, not reconnecting: %s", reason)
        self.link.stopped(reason)
        # What close() does first; its connect loop then returns instead of retrying. The
        # sockets and tasks are closed by SlackBot.stop, as for any stop.
        self.closed = True
        self.auto_reconnect_enabled = False

    def _why_lost(self) -> str:
        session = self.current_session
        if self.stale:
            return "connection went silent (no pong)"
        if session is not None and not session.closed:
            return "Slack asked for a new connection"  # its `disconnect` message
        code = session.close_code if session is not None else None
        return f"connection closed (close code {code})" if code else "connection lost"


class SupervisedSocketModeHandler(AsyncSocketModeHandler):
    """bolt's Socket Mode handler on a `SupervisedSocketModeClient`."""

    client: SupervisedSocketModeClient

    def __init__(self, app: AsyncApp, app_token: str, web_client: AsyncWebClient,
                 link: PlatformLink, ping_interval: float = PING_INTERVAL) -> None:
        # bolt's __init__ would build a plain SocketModeClient (and start its tasks): these
        # are its same few lines, with the supervised client.
        self.app = app
        self.app_token = app_token
        self.client = SupervisedSocketModeClient(
            link, app_token=app_token, web_client=web_client, ping_interval=ping_interval)
        self.client.socket_mode_request_listeners.append(self.handle)  # type: ignore[arg-type]

    async def handle(self, client: SocketModeClient,  # type: ignore[override]
                     req: SocketModeRequest) -> None:
        """bolt's handle (run the app, send the ack), counting an envelope it could not
        handle: one that raised, or that bolt answered with a 5xx (a middleware or listener
        error, which bolt has logged; it is not acked, so Slack delivers it again). One bolt
        cannot read at all is only acknowledged (bots/slack/intake.py)."""
        start = time.time()
        if not bolt_can_read(req.payload):
            unreadable(f"a Socket Mode {req.type} envelope ({req.envelope_id})")
            await send_async_response(client, req, BoltResponse(status=200, body=""), start)
            return
        try:
            answer = await run_async_bolt_app(self.app, req)
        except Exception:  # one envelope is lost, never the connection: log and count it
            log.exception("slack: dropped a Socket Mode %s envelope (%s) that could not be "
                          "handled", req.type, req.envelope_id)
            self.client.link.dropped_event()
            return
        if answer.status >= 500:
            log.warning("slack: dropped a Socket Mode %s envelope (%s): bolt answered %d",
                        req.type, req.envelope_id, answer.status)
            self.client.link.dropped_event()
        await send_async_response(client, req, answer, start)
