"""The reaction on the person's message while the bot works on it (which mark each status
shows: bots/discord/render/reactions.py).

Reactions are cosmetic. They are offered after the turn's own write (live.py) to an outbox of
their own, on Discord's reaction budget of the channel, so they never take a message write's
token nor delay the answer. A refusal (no Add Reactions permission, the message deleted) is
said once and skipped (`writer.Refusals`). Which mark this process left on each message is
remembered; a message it knows nothing of (a run recovered after a restart) has its 👀 taken
off anyway, so the final mark is right.
"""

from __future__ import annotations

from functools import partial

from bots.discord.delivery.budgets import Permit
from bots.discord.delivery.outbox import Outbox
from bots.discord.delivery.writer import Refusals, Writer
from bots.discord.refs import Asked
from bots.discord.render.reactions import WORKING, mark_of
from core.conversation.vocabulary import MessageStatus
from core.edge.dedupe import Recent


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
