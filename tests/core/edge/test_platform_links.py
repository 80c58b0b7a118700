"""The platform links' states and the health rule over them (pure, on a clock the test moves)."""

from __future__ import annotations

from core.edge.platform_links import REASON_LIMIT, LinkState, PlatformLink, PlatformLinks
from tests.fakes.clock import ManualClock


def test_a_link_is_not_connected_until_told_and_counts_reconnects_after_the_first() -> None:
    clock = ManualClock()
    link = PlatformLink(clock)
    clock.advance(5)
    first = link.report()
    assert (first.state, first.reason, first.down_for) == (LinkState.RECONNECTING, "connecting", 5)
    link.connected()
    assert link.report().reconnects == 0 and link.report().down_for == 0
    link.lost("disconnected (close code 1006)")
    clock.advance(3)
    link.lost("connection ended: OSError")  # still the same outage: its start stays
    assert link.report().down_for == 3 and link.report().reason == "connection ended: OSError"
    link.connected()
    link.connected()  # a second ready for the same connection is not another reconnect
    assert (link.report().state, link.report().reason, link.report().reconnects) == (
        LinkState.OK, None, 1)


def test_down_is_kept_until_connected_again() -> None:
    link = PlatformLink(ManualClock())
    link.connected()
    link.stopped("authentication failed (close code 4004)")
    link.lost("disconnected")  # discord.py's disconnect event arriving after the stop
    assert (link.state, link.report().reason) == (LinkState.DOWN,
                                                  "authentication failed (close code 4004)")


def test_only_a_platform_unconnected_longer_than_the_setting_is_down_too_long() -> None:
    clock = ManualClock()
    links = PlatformLinks(down_after=30, clock=clock)
    slack, discord = links.add("slack"), links.add("discord")
    assert links.add("slack") is slack
    slack.connected()
    discord.connected()
    discord.lost("disconnected")
    clock.advance(30)
    assert links.down_too_long() == []
    clock.advance(1)
    assert links.down_too_long() == ["discord"]
    assert list(links.reports()) == ["discord", "slack"]
    discord.connected()
    assert links.down_too_long() == []


def test_a_reason_is_one_bounded_clean_line() -> None:
    link = PlatformLink(ManualClock())
    link.lost("bad\x00 \ud800 news\n" + "x" * 5000)
    reason = link.report().reason
    assert reason is not None and len(reason) == REASON_LIMIT
    assert reason.startswith("bad ? news x") and "\x00" not in reason and reason.endswith("…")
