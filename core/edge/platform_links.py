"""The connection of each chat platform `serve` started (the Discord gateway, Slack Socket
Mode) as its supervisor reports it, and the health rule over them.

A link is `ok` while connected, `reconnecting` while its supervisor (or the platform library
itself) is getting it back, and `down` once it stopped for good (a refused token): it never
leaves `down` by itself. A platform that has not been connected for longer than
PLATFORM_DOWN_SECONDS makes the service unhealthy, whatever the reason; a short reconnect does
not. Each link also counts the connections re-established after a loss and the inbound events
dropped because they could not be parsed (for `/metrics`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

DOWN_SECONDS = 120  # PLATFORM_DOWN_SECONDS by default
REASON_LIMIT = 300  # characters of a reason kept: it comes from exceptions and the platform


class LinkState(StrEnum):
    OK = "ok"
    RECONNECTING = "reconnecting"
    DOWN = "down"


@dataclass(frozen=True, slots=True)
class LinkReport:
    """One link at one moment: `down_for` is how long it has not been connected (0 when ok)."""

    state: LinkState
    reason: str | None
    down_for: float
    reconnects: int
    dropped: int


class PlatformLink:
    """The state of one platform's connection; the supervisor calls the verbs, health and
    metrics read `report()`. It starts `reconnecting` ("connecting"): not connected yet."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._state = LinkState.RECONNECTING
        self._reason: str | None = "connecting"
        self._since = clock()
        self._ever_connected = False
        self._reconnects = 0
        self._dropped = 0

    @property
    def state(self) -> LinkState:
        return self._state

    def connected(self) -> None:
        """The connection is up (again): a reconnect is counted when it had been up before."""
        if self._state is not LinkState.OK and self._ever_connected:
            self._reconnects += 1
        self._state, self._reason, self._ever_connected = LinkState.OK, None, True

    def lost(self, reason: str) -> None:
        """The connection dropped and is being re-established; a `down` link stays down."""
        if self._state is LinkState.DOWN:
            return
        self._leave_ok()
        self._state, self._reason = LinkState.RECONNECTING, _bounded(reason)

    def stopped(self, reason: str) -> None:
        """The connection cannot succeed (a refused token): no reconnect will be tried."""
        self._leave_ok()
        self._state, self._reason = LinkState.DOWN, _bounded(reason)

    def dropped_event(self) -> None:
        """One inbound event could not be parsed and was dropped (the connection stayed up)."""
        self._dropped += 1

    def report(self) -> LinkReport:
        down_for = 0.0 if self._state is LinkState.OK else max(0.0, self._clock() - self._since)
        return LinkReport(self._state, self._reason, down_for, self._reconnects, self._dropped)

    def _leave_ok(self) -> None:
        if self._state is LinkState.OK:
            self._since = self._clock()


class PlatformLinks:
    """The links of the configured platforms, by name (`slack`, `discord`), and how long one
    may stay unconnected before health answers 503 (`down_after`, seconds)."""

    def __init__(self, down_after: float = DOWN_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.down_after = down_after
        self._clock = clock
        self._links: dict[str, PlatformLink] = {}

    def add(self, platform: str) -> PlatformLink:
        """The link of `platform`, created on first use (one per platform)."""
        return self._links.setdefault(platform, PlatformLink(self._clock))

    def reports(self) -> dict[str, LinkReport]:
        """Every configured platform's link, in name order."""
        return {name: self._links[name].report() for name in sorted(self._links)}

    def down_too_long(self) -> list[str]:
        """The platforms not connected for longer than `down_after`."""
        return [name for name, report in self.reports().items()
                if report.state is not LinkState.OK and report.down_for > self.down_after]


def _bounded(reason: str) -> str:
    """Reasons are shown by health and logged: one line, bounded, no NULs or lone surrogates."""
    text = " ".join(reason.replace("\x00", " ").split())
    text = text.encode("utf-8", "replace").decode("utf-8")
    return text if len(text) <= REASON_LIMIT else text[: REASON_LIMIT - 1] + "…"
