"""A fake Slack for tests: Web API + Socket Mode on a random 127.0.0.1 port.

    async with FakeSlack(clock=clock) as slack:
        client = AsyncWebClient(base_url=slack.api_url, token="xoxb-test")
        ...
        assert slack.message("C1", ts).text == "done"
        assert slack.ratelimited == 0

It keeps channels and messages in memory, records every call (`slack.calls`), enforces
Slack's documented limits (`SlackLimits`, on an injectable clock) and takes injected faults
(`fail`, `ratelimit`, `hang` / `release`, `outage`; `refuse` a method for good,
`streaming = False` for a workspace without chat.startStream, `expire_stream`; `agent = False`
for an app not declared as an agent, `press_stop` for the agent session's native Stop). Streamed
messages (chat.startStream) keep their chunks, tasks and plan title on the `Message`.
`slack.socket` is the Socket Mode end.
"""

from ..clock import ManualClock
from .faults import Fault
from .limits import TIER_1, TIER_2, TIER_3, TIER_4, Budget, SlackLimits, Window
from .model import Identity, Message, Revision
from .server import Call, FakeSlack
from .socket_mode import SocketModeServer

__all__ = [
    "TIER_1", "TIER_2", "TIER_3", "TIER_4", "Budget", "Call", "FakeSlack", "Fault", "Identity",
    "ManualClock", "Message", "Revision", "SlackLimits", "SocketModeServer", "Window",
]
