"""Socket Mode (SLACK_APP_TOKEN): the same listeners over the fake's websocket."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest

from bots.slack.supervisor import FATAL_ERRORS
from core.edge.platform_links import LinkState, PlatformLink
from core.runtime.pool import RunPool
from tests.bots.slack.clocks import FastClock
from tests.bots.slack.harness import Harness, running, texts, until
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.fakes.slack import FakeSlack
from tests.fakes.slack_payloads import CHANNEL_ID, make_slack_event, make_slash_command
from tests.fakes.changes import WAIT


async def test_a_mention_and_a_command_over_socket_mode(
    fake_slack: FakeSlack, pool: RunPool, fast_clock: FastClock, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("Hello over the socket."))
    async with running(fake_slack, pool, fast_clock, slack_app_token="xapp-test") as h:
        await fake_slack.socket.wait_connected()
        event = make_slack_event("app_mention", text="hi")
        envelope = await fake_slack.socket.push_event(event)
        assert await fake_slack.socket.wait_ack(envelope) == {"envelope_id": envelope}
        [answer] = await h.answered(CHANNEL_ID, event["event"]["ts"])
        assert "Hello over the socket." in texts(answer)

        envelope = await fake_slack.socket.push_command(make_slash_command("/hermes", "status"))
        ack = await fake_slack.socket.wait_ack(envelope)
        assert "0 running, 0 queued" in ack["payload"]["text"]
    assert [c.token for c in fake_slack.calls_to("apps.connections.open")] == ["xapp-test"]


def link_is(link: PlatformLink, state: LinkState, reconnects: int = 0) -> Callable[[], bool]:
    def check() -> bool:
        report = link.report()
        return report.state is state and report.reconnects == reconnects
    return check


async def mention_is_answered(slack: FakeSlack, h: Harness, llm: ScriptedLLM, text: str) -> None:
    llm.script(text_reply(text))
    event = make_slack_event("app_mention", text="still there?")
    envelope = await slack.socket.push_event(event)
    assert await slack.socket.wait_ack(envelope) == {"envelope_id": envelope}
    [answer] = await h.answered(CHANNEL_ID, event["event"]["ts"])
    assert text in texts(answer)


@pytest.mark.parametrize("how", ["close frame", "disconnect message"])
async def test_the_socket_closed_by_slack_is_reconnected_and_events_flow_again(
    fake_slack: FakeSlack, pool: RunPool, fast_clock: FastClock, llm: ScriptedLLM, how: str
) -> None:
    link = PlatformLink()
    async with running(fake_slack, pool, fast_clock, link=link, slack_app_token="xapp-test") as h:
        await until(link_is(link, LinkState.OK))
        if how == "close frame":
            await fake_slack.socket.close(code=1001)
        else:
            await fake_slack.socket.disconnect("refresh_requested")
        await fake_slack.socket.wait_connected(count=2, timeout=WAIT)
        await until(link_is(link, LinkState.OK, reconnects=1))
        await mention_is_answered(fake_slack, h, llm, "Hello on the new socket.")
    assert len(fake_slack.calls_to("apps.connections.open")) == 2  # a fresh URL for each


async def test_a_dropped_connection_is_noticed_and_reconnected(
    fake_slack: FakeSlack, pool: RunPool, fast_clock: FastClock, llm: ScriptedLLM
) -> None:
    """No close frame: slack_sdk's monitor sees the socket closed at its next check."""
    link = PlatformLink()
    async with running(fake_slack, pool, fast_clock, link=link, socket_ping_interval=0.2,
                       slack_app_token="xapp-test") as h:
        await until(link_is(link, LinkState.OK))
        fake_slack.socket.drop()
        await fake_slack.socket.wait_connected(count=2, timeout=WAIT)
        await until(link_is(link, LinkState.OK, reconnects=1))
        await mention_is_answered(fake_slack, h, llm, "Hello after the drop.")


async def test_a_frame_that_is_not_json_is_dropped_and_an_unreadable_envelope_acknowledged(
    fake_slack: FakeSlack, pool: RunPool, fast_clock: FastClock, llm: ScriptedLLM,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A frame that is not JSON has no envelope id to acknowledge: it is dropped and counted.
    An envelope whose event bolt cannot read (issue 18; bolt answered it 500 before) is
    acknowledged, logged at debug, and nothing is counted as dropped."""
    caplog.set_level(logging.DEBUG, logger="bots.slack")
    link = PlatformLink()
    async with running(fake_slack, pool, fast_clock, link=link, slack_app_token="xapp-test") as h:
        await until(link_is(link, LinkState.OK))
        await fake_slack.socket.send_raw('{"type": "events_api", "envelope_id": ')
        await until(lambda: link.report().dropped == 1)
        envelope = await fake_slack.socket.push("events_api", {"type": "event_callback", "event": "?"})
        assert await fake_slack.socket.wait_ack(envelope) == {"envelope_id": envelope}
        await mention_is_answered(fake_slack, h, llm, "Unbothered.")
        assert link.report().state is LinkState.OK and link.report().dropped == 1
    assert len(fake_slack.socket.connections) == 1
    assert "dropped a Socket Mode frame that is not JSON" in caplog.text
    assert f"acknowledged a Socket Mode events_api envelope ({envelope})" in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


async def test_envelopes_of_payloads_the_bot_does_not_use_are_acknowledged(
    fake_slack: FakeSlack, pool: RunPool, fast_clock: FastClock, caplog: pytest.LogCaptureFixture,
) -> None:
    """The same typed parse as over HTTP: another subtype, an edit without message.ts whose
    text did not change, a view_closed are each acknowledged, nothing dropped or logged above
    debug."""
    caplog.set_level(logging.DEBUG, logger="bots.slack")
    link = PlatformLink()
    changed = make_slack_event("message_changed", text="same", message_ts="1650000000.000100",
                               previous_text="same")
    del changed["event"]["message"]["ts"]
    deleted = make_slack_event({"type": "message", "subtype": "message_deleted", "channel": CHANNEL_ID,
                                "ts": "1650000000.2", "deleted_ts": "1650000000.1"})
    async with running(fake_slack, pool, fast_clock, link=link, slack_app_token="xapp-test"):
        await until(link_is(link, LinkState.OK))
        for kind, payload in (("events_api", changed), ("events_api", deleted),
                              ("interactive", {"type": "view_closed", "view": {"callback_id": "x"}})):
            envelope = await fake_slack.socket.push(kind, payload)
            assert await fake_slack.socket.wait_ack(envelope) == {"envelope_id": envelope}
        assert link.report().dropped == 0
    assert "slack: ignored a message subtype message_deleted" in caplog.text
    assert "Unhandled request" not in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


async def test_a_refused_app_token_stops_socket_mode_and_says_why(
    pool: RunPool, fast_clock: FastClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="bots.slack.supervisor")
    link = PlatformLink()
    async with FakeSlack(clock=fast_clock, bot_token="xoxb-test", app_token="xapp-real") as slack:
        async with running(slack, pool, fast_clock, link=link, socket_ping_interval=0.05,
                           slack_app_token="xapp-wrong") as h:
            await until(lambda: not h.bot.socket_mode_connecting)
            assert (link.state, link.report().reason) == (LinkState.DOWN,
                                                          FATAL_ERRORS["invalid_auth"])
        assert len(slack.calls_to("apps.connections.open")) == 1 and not slack.socket.connections
    assert "Socket Mode stopped, not reconnecting" in caplog.text
