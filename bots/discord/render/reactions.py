"""The reaction on the person's message while the bot works on it: 👀 once its run is
running (a run queued for a free slot gets it when it starts), then ✅ answered or ❌ failed;
a stopped run only loses its 👀 (the answer says "Stopped"; a stop is not a failure).

Reactions are cosmetic. They are offered after the turn's own write (bots/discord/render/
presenters.py) to an outbox of their own, on Discord's reaction budget of the channel, so
they never take a message write's token nor delay the answer. A refusal (no Add Reactions
permission, the message deleted) is said once and skipped (`delivery.Refusals`). Which mark
this process left on each message is remembered; a message it knows nothing of (a run
recovered after a restart) has its 👀 taken off anyway, so the final mark is right.
"""

from __future__ import annotations

from functools import partial

from bots.discord.delivery import Outbox, Permit, Refusals, Writer
from bots.discord.refs import Asked
from core.conversation.vocabulary import MessageStatus
from core.edge.dedupe import Recent
from core.edge.ratelimit import Limit

WORKING, ANSWERED, FAILED = "👀", "✅", "❌"
# The mark of each status ("" none); a status not here (queued) changes nothing.
MARKS = {
    MessageStatus.RUNNING: WORKING,
    MessageStatus.SUCCESS: ANSWERED,
    MessageStatus.FAILED: FAILED,
    MessageStatus.STOPPED: "",
}
# Discord's reaction route allows about 4 a second per channel; two per turn, mostly.
REACTION_LIMIT = Limit(per_second=2.0, burst=2)


def mark_of(status: MessageStatus) -> str | None:
    """The reaction a run of `status` shows ("" none), or None: leave it as it is."""
    return MARKS.get(status)


class ReactionPresenter:
    def __init__(self, writer: Writer, outbox: Outbox) -> None:
        self._writer = writer
        self._outbox = outbox
        self._left: Recent[int, str] = Recent()  # message -> the mark this process left ("" none)
        self._offered: Recent[int, str] = Recent()
        self._refusals = Refusals()

    def show(self, asked: Asked, status: MessageStatus) -> None:
        """Queue the message's mark for a run of `status` (the same mark again costs nothing)."""
        mark = mark_of(status)
        if mark is None or self._offered.get(asked.message_id) == mark:
            return
        self._offered.put(asked.message_id, mark)
        job = partial(self._apply, asked, mark)
        self._outbox.offer(asked.channel_id, ("reaction", asked.message_id), job)

    async def _apply(self, asked: Asked, mark: str, permit: Permit) -> None:
        message = asked.message_id
        known = message in self._left
        left = self._left.get(message) if known else None
        stale = left if known else ("" if mark == WORKING else WORKING)
        async with self._refusals.skipping("a reaction", asked.channel_id):
            if stale and stale != mark:
                await self._writer.unreact(permit, message, stale)
                self._left.put(message, "")
            if mark and left != mark:
                await self._writer.react(permit, message, mark)
            self._left.put(message, mark)
