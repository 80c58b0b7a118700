"""Socket Mode (SLACK_APP_TOKEN): the same listeners over the fake's websocket."""

from __future__ import annotations

from core.runtime.pool import RunPool
from tests.bots.slack.clocks import FastClock
from tests.bots.slack.harness import running, texts
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.fakes.slack import FakeSlack
from tests.fakes.slack_payloads import CHANNEL_ID, make_slack_event, make_slash_command


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
