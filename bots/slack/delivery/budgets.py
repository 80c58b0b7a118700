"""Our budgets for Slack's rate limits: a sliding window per workspace and method, plus a token
bucket per message (edits) and per channel (posts). Each sits a little under what Slack
enforces, so network jitter between our clock and Slack's never turns into a 429.

Slack: chat.update ~1/s per message and Tier 3 (50+/min) per workspace; chat.postMessage
~1/s per channel with short bursts; views.*, chat.postEphemeral, files.*, chat.appendStream,
users.info Tier 4 (100+/min); conversations.replies Tier 3; chat.startStream and
chat.stopStream Tier 2 (20+/min); assistant.threads.setStatus a "special" tier without a
published figure, held to Tier 3 here; agents.sessions.setStatus / rename and
assistant.threads.setTitle Tier 3.

A tier is counted per method and workspace, and Slack says its "rate limit windows are per
minute" and bursts are welcome: so a tier here is a sliding window (core.edge.ratelimit
`Limit.sliding`), the tier's calls in any minute however they bunch. A token bucket of the
same rate either refuses what Slack allows (a burst of Tier 2's 20 streams) or, refilling
while it spends, allows more than the minute holds (45/min with a burst of 8: 53 in a
minute, a 429 on a workspace busy for a minute). The window is 2 s longer than Slack's
minute: a call taken here arrives there a little later, so takes 62 s apart never arrive
within Slack's 60. Tier 3 and 4 keep two and four calls under the figure besides, for a burst
whose first calls were slow on their way (a busy loop); Tier 2 holds all 20, its calls (a
turn's stream start and stop) too few to crowd.

Every run of a workspace spends the same budgets. The order of value (answer, question,
status, progress) is kept by the callers: an answer never waits for a workspace budget (it
takes the workspace's call at once with `SlackSender.reserve`, or is posted as a new message,
whose budget is per channel), progress waits behind everything or is dropped, and status
only ever takes what is there now.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable

from core.edge.ratelimit import Limit

# Shared like the others: one message may be edited by several replicas at once (a question
# clicked on one replica while another drives its run, a run taken over by another replica
# while the old one's last edit is in flight), and Slack counts its edits whoever sends them.
# Slack spaces them as they arrive: the sender counts the interval again from each edit's
# answer (RateLimiter.answered), so a slow edit followed by a quick one is no 429.
PER_MESSAGE_EDIT = Limit(per_second=1 / 1.1, burst=1)
PER_CHANNEL_POST = Limit(per_second=1 / 1.1, burst=4)
MINUTE = 62.0  # Slack's minute and a call's way there
TIER_2 = Limit.sliding(20, MINUTE)
TIER_3 = Limit.sliding(48, MINUTE)
TIER_4 = Limit.sliding(96, MINUTE)

Budget = tuple[str, Limit]


def workspace(team: str, method: str, limit: Limit) -> Budget:
    return (f"slack:{team}:{method}", limit)


def edit(team: str, channel: str, ts: str) -> list[Budget]:
    return [*message_edit(team, channel, ts), *updates(team)]


def message_edit(team: str, channel: str, ts: str) -> list[Budget]:
    """The one message's own chat.update budget (~1/s)."""
    return [(f"slack:{team}:edit:{channel}:{ts}", PER_MESSAGE_EDIT)]


def updates(team: str) -> list[Budget]:
    """The workspace's chat.update budget, which every edit of every run spends."""
    return [workspace(team, "chat.update", TIER_3)]


def post(team: str, channel: str) -> list[Budget]:
    return [(f"slack:{team}:post:{channel}", PER_CHANNEL_POST)]


def delete(team: str) -> list[Budget]:
    return [workspace(team, "chat.delete", TIER_3)]


def ephemeral(team: str) -> list[Budget]:
    return [workspace(team, "chat.postEphemeral", TIER_4)]


def views(team: str) -> list[Budget]:
    return [workspace(team, "views.update", TIER_4)]


def upload(team: str) -> list[Budget]:
    return [workspace(team, "files.upload", TIER_4)]


def start_stream(team: str) -> list[Budget]:
    return [workspace(team, "chat.startStream", TIER_2)]


def append_stream(team: str) -> list[Budget]:
    return [workspace(team, "chat.appendStream", TIER_4)]


def stop_stream(team: str) -> list[Budget]:
    return [workspace(team, "chat.stopStream", TIER_2)]


def prompts(team: str) -> list[Budget]:
    return [workspace(team, "assistant.threads.setSuggestedPrompts", TIER_4)]


def status(team: str) -> list[Budget]:
    return [workspace(team, "assistant.threads.setStatus", TIER_3)]


def replies(team: str) -> list[Budget]:
    """conversations.replies (a thread's earlier messages): Tier 3."""
    return [workspace(team, "conversations.replies", TIER_3)]


def users(team: str) -> list[Budget]:
    """users.info (an author's name): Tier 4."""
    return [workspace(team, "users.info", TIER_4)]


def agent_session(team: str, method: str) -> list[Budget]:
    """agents.sessions.setStatus / rename, assistant.threads.setTitle: Tier 3 each."""
    return [workspace(team, method, TIER_3)]


def session_status(team: str) -> list[Budget]:
    """agents.sessions.setStatus: a session opened (`processing`) promises its closing."""
    return agent_session(team, "agents.sessions.setStatus")


OPEN_LIVE_MESSAGES = 10  # edit-based live messages at once per workspace (see OpenMessages)


class OpenMessages:
    """How many edit-based live messages a workspace has open. Each will need one chat.update
    for its answer; holding them to a few means those answers never queue behind each other
    (a turn beyond them shows its progress as the thread's loading status instead)."""

    def __init__(self, limit: int = OPEN_LIVE_MESSAGES) -> None:
        self.limit = limit
        self._open: dict[str, int] = {}

    def enter(self, team: str) -> bool:
        if self._open.get(team, 0) >= self.limit:
            return False
        self._open[team] = self._open.get(team, 0) + 1
        return True

    def leave(self, team: str) -> None:
        self._open[team] = max(0, self._open.get(team, 0) - 1)


TURN_WAIT = 1.0  # seconds a turn waits for those begun before it to try streaming first


class StreamTurns:
    """The order turns try to stream in: the order their runs began (RunFollower), so that a
    burst's streams go to its first turns, whatever their reads before that took. A turn waits
    until every turn begun before it has tried (or will not), a second at most: one held up
    longer loses its place rather than hold up the rest."""

    def __init__(self, wait: float = TURN_WAIT,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self._wait = wait
        self._sleep = sleep  # the budgets' (injected) clock
        self._numbers = itertools.count()
        self._pending: set[int] = set()
        self._changed = asyncio.Event()

    def ticket(self) -> int:
        number = next(self._numbers)
        self._pending.add(number)
        return number

    async def turn(self, ticket: int) -> None:
        """Until the turns before `ticket` have tried (or the wait, TURN_WAIT, has passed)."""
        waited = asyncio.ensure_future(self._sleep(self._wait))
        try:
            while min(self._pending, default=ticket) < ticket and not waited.done():
                changed = asyncio.ensure_future(self._changed.wait())
                await asyncio.wait({changed, waited}, return_when=asyncio.FIRST_COMPLETED)
                changed.cancel()
        finally:
            waited.cancel()

    def done(self, ticket: int) -> None:
        """The turn of `ticket` tried, or will not (again: nothing)."""
        if ticket in self._pending:
            self._pending.discard(ticket)
            changed, self._changed = self._changed, asyncio.Event()
            changed.set()
