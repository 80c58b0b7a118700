"""Each clarify question as its own message: posted once, edited when answered or closed."""

from __future__ import annotations

from functools import partial

from bots.discord.budget import Permit
from bots.discord.outbox import Outbox
from bots.discord.render.clarify import clarify_part
from bots.discord.targets import Targets
from bots.discord.writer import Writer
from core.conversation.dedupe import Recent
from core.models import PauseStatus
from core.runtime.updates import PauseView


def shown_state(pause: PauseView, run_finished: bool) -> str:
    """What the question's message shows: an open question closes when its run ends."""
    if pause.status == PauseStatus.UNANSWERED and run_finished:
        return "CLOSED"
    return str(pause.status)


class PausePresenter:
    def __init__(self, targets: Targets, writer: Writer, outbox: Outbox) -> None:
        self._targets = targets
        self._writer = writer
        self._outbox = outbox
        self._offered: Recent[int, str] = Recent()

    def show(self, pause: PauseView, run_finished: bool, channel_id: int) -> None:
        state = shown_state(pause, run_finished)
        if self._offered.get(pause.pause_id) == state:
            return
        self._offered.put(pause.pause_id, state)
        job = partial(self._render, pause, run_finished, state, channel_id)
        self._outbox.offer(channel_id, ("pause", pause.pause_id), job)

    async def _render(self, pause: PauseView, run_finished: bool, state: str, channel_id: int,
                      permit: Permit) -> None:
        try:
            refs = await self._targets.pause(pause.pause_id)
            if refs.get("shown") == state:
                return  # shown before a restart
            part = clarify_part(pause, run_finished)
            if refs.get("message"):
                message_id = await self._writer.edit(permit, int(refs["message"]), part)
            else:
                message_id = await self._writer.post(permit, part)
        except BaseException:
            self._offered.pop(pause.pause_id)  # offer it again with the next update
            raise
        refs = {"channel": str(channel_id), "message": str(message_id), "shown": state}
        await self._targets.save_pause(pause.pause_id, refs)
