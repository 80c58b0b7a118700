"""A turn streamed into one message (chat.startStream / appendStream / stopStream): its
tools and todos as task and plan chunks while it runs, then the answer as Markdown and, at
the bottom, the footer, our buttons and 👍 / 👎.

`open` gives None whenever the stream is not the way to go (a workspace that refuses the
methods, no Tier 2 budget now): the turn then takes the edit-based live message.
A stream that breaks later raises `StreamBroken`; its message is then edited like a live
message, so the user never sees a broken one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from slack_sdk.errors import SlackApiError

from core.conversation import turns
from core.conversation.vocabulary import MessageStatus, RunUpdate

from ..refs import Slot
from ..render.blocks import Block, Payload, context, section
from ..render.turn import (
    ANSWER_BELOW,
    ATTACHED,
    BRANCHED,
    MAX_MESSAGES,
    ChunkDiff,
    Versions,
    answer_controls,
    answer_parts,
    render_answer,
    stop_control,
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
        """The stream, started; None when the turn should take the fallback. A stream lives
        in a thread: at a DM's top level it opens the thread of the user's message."""
        in_dm = slot.channel.startswith("D")
        if not services.features.has(slot.team, STREAMING):
            return None
        if not in_dm and not recipient:
            return None  # outside a DM Slack wants the user the stream is for
        thread = slot.thread_ts or (await turns.platform_id(update.user_message_id) if in_dm else None)
        if thread is None:
            return None
        diff = ChunkDiff()
        try:
            ts = await services.sender.start_stream(slot.team, slot.channel, thread,
                                                    None if in_dm else recipient,
                                                    diff.changed(update))
        except SlackApiError as error:
            if not services.features.refused(slot.team, STREAMING, error):
                log.warning("chat.startStream failed (%s): an edited message instead",
                            error.response.get("error"))
            return None
        if ts is None:
            return None
        return cls(services, slot.moved(ts=ts, thread_ts=thread, streamed=True), diff)

    @staticmethod
    async def close_stale(services: SlackServices, slot: Slot) -> None:
        """Stop a stream a restart left open, so its message can be edited (one Slack
        already ended, or that expired, is refused: nothing is left to do)."""
        try:
            await services.sender.stop_stream(slot.team, slot.channel, slot.ts or "", [], [])
        except SlackApiError as error:
            log.info("stale stream %s not stopped (%s): editing it", slot.ts,
                     error.response.get("error"))

    async def progress(self, newest: Callable[[], RunUpdate]) -> None:
        """One append of whatever changed in the `newest` state when the budget lets it
        through. What an attempt rendered and did not get through (a 429 or a timeout tried
        again, or the append dropped because the run ended) is sent again by the next
        attempt, the next call or the stop."""
        slot, attempt = self.slot, list[Block]()

        def render() -> list[Block]:
            self._diff.unsent(attempt)
            attempt[:] = self._diff.changed(newest())
            return list(attempt)
        try:
            await self._services.sender.append_stream(slot.team, slot.channel, slot.ts or "", render)
        except SlackApiError as error:
            raise StreamBroken(str(error.response.get("error"))) from error
        except BaseException:
            self._diff.unsent(attempt)
            raise

    async def reserve_stop(self) -> bool:
        """Take the workspace's chat.stopStream call now, if there is one (for `finish`)."""
        return await self._services.sender.reserve(budgets.stop_stream(self.slot.team), urgent=True)

    async def finish(self, update: RunUpdate, versions: Versions, urgent: bool = True,
                     session_status: str | None = None, reserved: bool = False) -> None:
        """Stop the stream with the answer's first part and its controls (the caller posts
        the rest: live.show_rest); `session_status` moves the thread's agent session;
        `reserved`: `reserve_stop` took its call."""
        slot, chunks, blocks = self.slot, self._diff.changed(update), self.closing_blocks(update, versions)
        parts = answer_parts(update.state.final_text or "")
        if update.status == MessageStatus.SUCCESS and parts:
            chunks.append({"type": "markdown_text", "text": parts[0]})
        try:
            await self._services.sender.stop_stream(slot.team, slot.channel, slot.ts or "",
                                                    chunks, blocks, urgent=urgent,
                                                    session_status=session_status,
                                                    reserved=reserved)
        except SlackApiError as error:
            raise StreamBroken(str(error.response.get("error"))) from error

    async def tidy(self, update: RunUpdate) -> None:
        """Close a stream whose answer went out as a new message (its tasks stay readable)."""
        slot = self.slot
        await self._services.sender.stop_stream(slot.team, slot.channel, slot.ts or "",
                                                self._diff.changed(update),
                                                [context(ANSWER_BELOW)], urgent=False)

    def closing_blocks(self, update: RunUpdate, versions: Versions) -> list[Block]:
        head = [context(BRANCHED)] if self.slot.branched else []
        if update.status != MessageStatus.SUCCESS:
            return [*head, *render_answer(update, versions, usage=self._services.usage).main.blocks]
        long = len(answer_parts(update.state.final_text or "")) > MAX_MESSAGES
        controls = answer_controls(update, versions, self._services.usage)
        return [*head, *([section(ATTACHED)] if long else []), *controls]


# --- the Stop beside a stream ---------------------------------------------------------
# A streamed turn's Stop where Slack shows none of its own: a streamed message cannot hold a
# button while it streams (chat.startStream / appendStream take Markdown, task and plan
# chunks; blocks only come with chat.stopStream), and Slack's native Stop exists only while the
# thread's agent session is `processing` (an app declared as an agent, whose setStatus went
# out). For an app Slack refuses agent sessions, a small message under the stream carries our
# Stop button while the run is in flight (posted only if its budget has room now: it never
# holds the turn up); it is deleted once the turn has ended, at progress priority.

COMPANION_TEXT = "Working on it… Stop it here."


class StopCompanion:
    def __init__(self, services: SlackServices) -> None:
        self._services = services
        self._slot: Slot | None = None

    async def show(self, slot: Slot, run_id: str) -> None:
        payload = Payload(COMPANION_TEXT, [context(COMPANION_TEXT), stop_control(run_id)])
        ts = await self._services.sender.post_now(slot.team, slot.channel, slot.thread_ts, payload)
        self._slot = None if ts is None else slot.moved(ts=ts)

    @property
    def shown(self) -> bool:
        return self._slot is not None

    async def remove(self) -> None:
        slot, self._slot = self._slot, None
        if slot is not None and slot.ts is not None:
            await self._services.sender.delete(slot.team, slot.channel, slot.ts)
