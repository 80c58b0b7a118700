"""The supervised Discord gateway connection: `GatewaySupervisor.run` keeps `client.connect()`
going, and one dispatch discord.py cannot parse is dropped instead of ending it.

discord.py already reconnects by itself for what it knows: a socket closed with 1006, 4000 or
any code it can handle, op 7 RECONNECT and INVALID_SESSION, network errors (RESUME where the
session allows, IDENTIFY otherwise). What it gives up on ends `connect()`: the close codes that
cannot succeed (4004 a refused token, 4010-4014 a bad shard, version or intents), where the
supervisor stops and says why, and any exception from the gateway loop, after which it
connects again (a new IDENTIFY: discord.py resumes only inside its own loop) with capped
backoff. A parser that raises (a field missing from a payload) would be such an exception:
`guard_parsers` catches it at the parse step, so that event alone is lost.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from typing import Any

import aiohttp
import discord

from core.edge.backoff import Backoff
from core.edge.platform_links import LinkState, PlatformLink

log = logging.getLogger(__name__)
RECONNECT_BACKOFF = Backoff(base=1.0, cap=60.0)
Parser = Callable[[Any], None]

# Close codes after which connecting again cannot succeed, with what the operator must fix.
FATAL_CLOSE_CODES = {
    4004: "authentication failed (close code 4004): Discord refused DISCORD_TOKEN",
    4010: "invalid shard (close code 4010)",
    4011: "sharding required (close code 4011): the bot is in too many guilds for one shard; "
          "set DISCORD_SHARD_COUNT (0: as many as Discord recommends)",
    4012: "invalid API version (close code 4012)",
    4013: "invalid intents (close code 4013)",
    4014: "disallowed intents (close code 4014): enable the Message Content intent of this "
          "application in the Discord Developer Portal (Bot, Privileged Gateway Intents)",
}
# Failures of the network or of Discord itself: expected while Discord cannot be reached.
NETWORK_ERRORS = (OSError, TimeoutError, aiohttp.ClientError, discord.DiscordException)
# READY is left unguarded: without it the client never becomes ready, so it is better that
# the connection ends and is made again than that it stays up half set up.
UNGUARDED = frozenset({"READY"})


class GatewaySupervisor:
    """Runs `client.connect()` until the client is closed, reporting to `link`."""

    def __init__(self, client: discord.Client, link: PlatformLink,
                 backoff: Backoff = RECONNECT_BACKOFF) -> None:
        self._client = client
        self._link = link
        self._backoff = backoff
        self._failures = 0
        self._said: set[str] = set()  # the reasons logged at warning since the link was last up
        self._stopping = asyncio.Event()
        self._quiet = QuietReconnects(link)
        logging.getLogger("discord.client").addFilter(self._quiet)
        guard_parsers(client, self._drop)

    async def run(self) -> None:
        """Connect, and connect again after whatever ends the connection; raises the error
        of a close code that cannot succeed, once the link says why it is down."""
        while not self._client.is_closed() and not self._stopping.is_set():
            try:
                await self._client.connect(reconnect=True)
            except Exception as error:  # the boundary of the connection: every cause is handled
                if (reason := fatal_reason(error)) is not None:
                    await self._give_up(reason)
                    raise
                if self._client.is_closed() or self._stopping.is_set():
                    return  # stopped while connecting: nothing to recover
                await self._recover(error)

    def stop(self) -> None:
        """No reconnect from now on (a backoff pause under way ends at once)."""
        self._stopping.set()
        logging.getLogger("discord.client").removeFilter(self._quiet)

    async def log_in(self, token: str) -> bool:
        """Log in (discord.py then runs setup_hook), again with backoff while Discord cannot be
        reached, as a connection that ends is made again; False once Discord refused the token
        (the link says so) or `stop()` came first."""
        while not self._stopping.is_set() and not self._client.is_closed():
            try:
                await self._client.login(token)
                return True
            except discord.LoginFailure:
                await self._give_up("Discord refused DISCORD_TOKEN (401 at log-in)")
                return False
            except Exception as error:  # unreachable, a 5xx, a proxy's garbage: try again
                await self._forget_http_session()
                if self._stopping.is_set():
                    return False
                await self._pause(self._lost(f"log-in failed: {describe(error)}", "logging in again",
                                             error))
        return False

    async def _recover(self, error: Exception) -> None:
        delay = self._lost(f"connection ended: {describe(error)}", "connecting again (IDENTIFY)",
                           error)
        ws = self._client.ws
        if ws is not None and ws.open:
            await ws.close(code=4000)  # not 1000: Discord keeps a session closed so resumable
        await self._pause(delay)

    def _lost(self, reason: str, next_step: str, error: Exception) -> float:
        """Tell the link; one warning per change of state (a reason not yet said since the
        link was up: a hang-up seen now as a reset, now as a disconnect, is said once each),
        the same failure again only at debug. The pause before the next try."""
        if self._link.state is LinkState.OK:
            self._failures, self._said = 1, set()
        else:
            self._failures += 1
        delay = self._backoff.delay(self._failures)
        level = logging.DEBUG if reason in self._said else logging.WARNING
        # A network failure says all in its line; anything else is a bug worth its traceback.
        trace = None if isinstance(error, NETWORK_ERRORS) else error
        log.log(level, "discord: %s; %s in %.1fs", reason, next_step, delay, exc_info=trace)
        self._said.add(reason)
        self._link.lost(reason)
        return delay

    async def _pause(self, delay: float) -> None:
        try:
            await asyncio.wait_for(self._stopping.wait(), delay)
        except TimeoutError:
            pass

    async def _forget_http_session(self) -> None:
        """discord.py makes a new HTTP session at each log-in: the failed one is closed, with
        its connector, and a new connector is made the next time."""
        http = self._client.http
        await http.close()
        http.connector = discord.utils.MISSING
        http.clear()

    async def _give_up(self, reason: str) -> None:
        log.error("discord: the gateway connection stopped, not reconnecting: %s", reason)
        self._link.stopped(reason)
        await self._client.close()

    def _drop(self, event: str, data: Any, error: Exception) -> None:
        fields = sorted(data) if isinstance(data, dict) else type(data).__name__
        # A payload we cannot use: counted (health, /metrics), said at debug, no traceback.
        log.debug("discord: dropped a %s dispatch discord.py could not parse (%s; fields %s)",
                  event, describe(error), fields)
        self._link.dropped_event()


class QuietReconnects(logging.Filter):
    """discord.py reconnects by itself inside `connect()`, logging "Attempting a reconnect"
    with a traceback at each try: here the first try after the link was up, or one for a new
    reason, is one warning line without the traceback; the same reason again is dropped."""

    def __init__(self, link: PlatformLink) -> None:
        super().__init__()
        self._link = link
        self._said: str | None = None
        self._down_for = 0.0

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith("Attempting a reconnect") or not record.exc_info:
            return True
        reason = describe(record.exc_info[1]) if record.exc_info[1] else "connection lost"
        down_for = self._link.report().down_for  # shorter than before: a new outage
        if reason == self._said and down_for >= self._down_for:
            self._down_for = down_for
            return False
        self._said, self._down_for = reason, down_for
        record.msg, record.args = ("discord: the gateway is unreachable (%s); discord.py "
                                   "reconnects in %.1fs", (reason, *(record.args or (0.0,))))
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        record.exc_info, record.exc_text = None, None
        return True


def guard_parsers(client: discord.Client,
                  on_drop: Callable[[str, Any, Exception], None]) -> None:
    """Wrap each parser of the client's connection state (`ConnectionState.parsers`, which
    the gateway calls for every dispatch) so that one that raises drops its event."""
    parsers: dict[str, Parser] = client._connection.parsers
    for event, parse in list(parsers.items()):
        if event not in UNGUARDED and not hasattr(parse, "__wrapped__"):
            parsers[event] = _guarded(event, parse, on_drop)


def gate_parsers(client: discord.Client, allowed: Callable[[], bool]) -> None:
    """Drop every dispatch but READY and RESUMED while `allowed()` is False (a shard this
    replica no longer holds: bots/discord/shards.py): no message, edit or click of it is
    handled here, whatever the socket still delivers before it is closed."""
    parsers: dict[str, Parser] = client._connection.parsers
    for event, parse in list(parsers.items()):
        if event not in ("READY", "RESUMED"):
            parsers[event] = _gated(parse, allowed)


def _gated(parse: Parser, allowed: Callable[[], bool]) -> Parser:
    @functools.wraps(parse)
    def gated(data: Any) -> None:
        if allowed():
            parse(data)

    return gated


def _guarded(event: str, parse: Parser,
             on_drop: Callable[[str, Any, Exception], None]) -> Parser:
    @functools.wraps(parse)
    def guarded(data: Any) -> None:
        try:
            parse(data)
        except Exception as error:  # one malformed dispatch must not end the connection
            on_drop(event, data, error)

    return guarded


def fatal_reason(error: BaseException) -> str | None:
    """Why connecting again cannot succeed, or None when it may."""
    if isinstance(error, discord.PrivilegedIntentsRequired):
        return FATAL_CLOSE_CODES[4014]
    if isinstance(error, discord.ConnectionClosed):
        return FATAL_CLOSE_CODES.get(error.code)
    return None


def describe(error: BaseException) -> str:
    """`KeyError: 'type'`: the exception's class and message, as the log and health say it."""
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def close_reason(ws: Any) -> str:
    """What a dropped gateway socket says about why (discord.py then reconnects by itself)."""
    code = getattr(getattr(ws, "socket", None), "close_code", None)
    return f"disconnected (close code {code})" if code else "disconnected"
