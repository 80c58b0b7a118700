"""A divider where the agent compacted its context, with the summary behind a button."""

from __future__ import annotations

from functools import partial

from bots.discord.budget import Permit
from bots.discord.outbox import Outbox
from bots.discord.render.pages import divider_part
from bots.discord.targets import Targets
from bots.discord.writer import Writer
from core.conversation.dedupe import Seen


class DividerPresenter:
    def __init__(self, targets: Targets, writer: Writer, outbox: Outbox) -> None:
        self._targets = targets
        self._writer = writer
        self._outbox = outbox
        self._offered = Seen()

    def show(self, summary_id: int, channel_id: int) -> None:
        if self._offered.first(summary_id):
            job = partial(self._post, summary_id, channel_id)
            self._outbox.offer(channel_id, ("summary", summary_id), job)

    async def _post(self, summary_id: int, channel_id: int, permit: Permit) -> None:
        if await self._targets.summary_posted(summary_id):
            return
        message_id = await self._writer.post(permit, divider_part(summary_id))
        await self._targets.save_summary(summary_id, channel_id, message_id)
