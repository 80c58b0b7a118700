"""A turn streamed into one message (chat.startStream / appendStream / stopStream): its
tools and todos as task and plan chunks while it runs, then the answer as Markdown and, at
the bottom, the footer, our buttons and 👍 / 👎.

`open` gives None whenever the stream is not the way to go (no thread, a workspace that
refuses the methods, no Tier 2 budget now): the turn then takes the edit-based live message.
A stream that breaks later raises `StreamBroken`; its message is then edited like a live
message, so the user never sees a broken one.
"""

from __future__ import annotations

import logging

from slack_sdk.errors import SlackApiError

from core.models import MessageStatus
from core.runtime.updates import RunUpdate

from ..refs import Slot
from ..render.blocks import Block, context, section
from ..render.turn import (
    ATTACHED,
    BRANCHED,
    MAX_MESSAGES,
    ChunkDiff,
    Versions,
    answer_controls,
    answer_parts,
    render_answer,
)
from ..services import SlackServices
from . import budgets
from .sender import STREAMING

log = logging.getLogger(__name__)


class StreamBroken(Exception):
    """The stream refused an append or a stop (it expired, or Slack said no)."""


class StreamedMessage:
    def __init__(self, services: SlackServices, slot: Slot, diff: ChunkDiff) -> None:
        self._services = services
        self.slot = slot
        self._diff = diff

    @classmethod
    async def open(cls, services: SlackServices, slot: Slot, update: RunUpdate,
                   recipient: str | None) -> StreamedMessage | None:
        """The stream, started; None when the turn should take the fallback."""
        in_dm = slot.channel.startswith("D")
        if slot.thread_ts is None or not services.features.has(slot.team, STREAMING):
            return None
        if not in_dm and not recipient:
            return None  # outside a DM Slack wants the user the stream is for
        diff = ChunkDiff()
        try:
            ts = await services.sender.start_stream(slot.team, slot.channel, slot.thread_ts,
                                                    None if in_dm else recipient,
                                                    diff.changed(update))
        except SlackApiError as error:
            if not services.features.refused(slot.team, STREAMING, error):
                log.warning("chat.startStream failed (%s): an edited message instead",
                            error.response.get("error"))
            return None
        return None if ts is None else cls(services, slot.moved(ts=ts), diff)

    async def progress(self, latest: RunUpdate) -> None:
        """One append of whatever changed, rendered when the budget lets it through."""
        slot = self.slot
        try:
            await self._services.sender.append_stream(slot.team, slot.channel, slot.ts or "",
                                                      lambda: self._diff.changed(latest))
        except SlackApiError as error:
            raise StreamBroken(str(error.response.get("error"))) from error

    def can_stop_now(self) -> bool:
        return self._services.sender.ready(budgets.stop_stream(self.slot.team))

    async def finish(self, update: RunUpdate, versions: Versions, urgent: bool = True) -> None:
        """Stop the stream with the answer's first part and its controls (the caller posts
        the rest: answers.show_rest)."""
        slot, chunks, blocks = self.slot, self._diff.changed(update), self.closing_blocks(update, versions)
        parts = answer_parts(update.state.final_text or "")
        if update.status == MessageStatus.SUCCESS and parts:
            chunks.append({"type": "markdown_text", "text": parts[0]})
        try:
            await self._services.sender.stop_stream(slot.team, slot.channel, slot.ts or "",
                                                    chunks, blocks, urgent=urgent)
        except SlackApiError as error:
            raise StreamBroken(str(error.response.get("error"))) from error

    async def tidy(self, update: RunUpdate) -> None:
        """Close a stream whose answer went out as a new message (its tasks stay readable)."""
        slot = self.slot
        await self._services.sender.stop_stream(slot.team, slot.channel, slot.ts or "",
                                                self._diff.changed(update),
                                                [context("The answer is below ↓")], urgent=False)

    def closing_blocks(self, update: RunUpdate, versions: Versions) -> list[Block]:
        head = [context(BRANCHED)] if self.slot.branched else []
        if update.status != MessageStatus.SUCCESS:
            return [*head, *render_answer(update, versions).main.blocks]
        long = len(answer_parts(update.state.final_text or "")) > MAX_MESSAGES
        return [*head, *([section(ATTACHED)] if long else []), *answer_controls(update, versions)]
