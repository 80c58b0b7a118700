"""A turn's first sign on Discord: the bot typing where its answer will come (the thread it
opened on a mention, the thread, the DM), shown before anything of the turn is written to
the database (in a burst of new conversations those writes queue behind each other for
seconds: bench/README.md, "Load").

Typing, not 👀: the 👀 on the person's message says that its run is running, and goes on
only after the turn's own message (reactions.py), so that it never takes that write's place.
Discord shows "… is typing" for ten seconds or until the bot posts there, which the turn's
live message does. The sign is offered to an outbox of its own, on a budget of its own
(`TYPING_LIMIT`): it never waits for a message write, nor delays one, nor the turn. A channel
that refuses it (no permission to send there) is skipped, said once.
"""

from __future__ import annotations

from bots.discord.delivery.budgets import Permit
from bots.discord.delivery.outbox import Outbox
from bots.discord.delivery.writer import Refusals, Writer


class FirstSign:
    def __init__(self, writer: Writer, outbox: Outbox) -> None:
        self._writer = writer
        self._outbox = outbox
        self._refusals = Refusals()

    def give(self, channel_id: int) -> None:
        """The bot typing in `channel_id`, as soon as its budget allows (once, however often
        it is offered meanwhile)."""
        self._outbox.offer(channel_id, "typing", self._type)

    async def _type(self, permit: Permit) -> None:
        async with self._refusals.skipping("typing", permit.channel_id):
            await self._writer.typing(permit)
