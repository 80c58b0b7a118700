"""One-off bot messages in a channel (refusals, greetings), within the channel's budget."""

from __future__ import annotations

from collections.abc import Hashable
from functools import partial

from bots.discord.budget import Permit
from bots.discord.outbox import Outbox
from bots.discord.render.parts import Part
from bots.discord.writer import Writer


class Notices:
    def __init__(self, writer: Writer, outbox: Outbox) -> None:
        self._writer = writer
        self._outbox = outbox

    def post(self, channel_id: int, part: Part, *, key: Hashable, reply_to: int | None = None) -> None:
        """Queue `part` as a new message (`key` makes it one of a kind: a replay replaces it)."""
        self._outbox.offer(channel_id, ("notice", key), partial(self._post, part, reply_to))

    async def _post(self, part: Part, reply_to: int | None, permit: Permit) -> None:
        await self._writer.post(permit, part, reply_to)
