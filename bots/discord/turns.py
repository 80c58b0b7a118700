"""Keep each turn's Discord messages showing the latest state of its run (or chosen version)."""

from __future__ import annotations

from functools import partial

from bots.discord.budget import Permit
from bots.discord.outbox import Outbox
from bots.discord.render.parts import Part
from bots.discord.render.turn import TurnContext, turn_parts
from bots.discord.targets import Targets, TurnTarget
from bots.discord.writer import Writer
from core.conversation import views
from core.conversation.dedupe import Recent
from core.models import ChatMessage
from core.runtime.updates import RunUpdate


class TurnPresenter:
    def __init__(self, targets: Targets, writer: Writer, outbox: Outbox) -> None:
        self._targets = targets
        self._writer = writer
        self._outbox = outbox
        self._offered: Recent[int, str] = Recent()  # turn -> signature of the live view offered

    def show(self, update: RunUpdate, target: TurnTarget) -> None:
        """Queue the turn's messages to show `update` (a live view equal to the last is skipped)."""
        if not update.finished:
            signature = turn_parts(update, TurnContext(branched=target.branched))[0].signature()
            if self._offered.get(update.user_message_id) == signature:
                return
            self._offered.put(update.user_message_id, signature)
        else:
            self._offered.pop(update.user_message_id)
        job = partial(self._render, update, target)
        self._outbox.offer(target.channel_id, ("turn", update.user_message_id), job)

    async def _render(self, update: RunUpdate, target: TurnTarget, permit: Permit) -> None:
        context = TurnContext(branched=target.branched)
        if update.finished:
            context = TurnContext(await views.versions(update.message_id), target.branched)
        await self._sync(update, target, turn_parts(update, context), permit)
        if update.finished and target.message_ids:
            await ChatMessage.filter(id=update.message_id).update(
                platform_message_id=str(target.message_ids[0]))

    async def _sync(self, update: RunUpdate, target: TurnTarget, parts: list[Part],
                    permit: Permit) -> None:
        """Edit the turn's messages in place, post the extra parts, delete the surplus ones."""
        before = list(target.message_ids)
        messages = target.message_ids
        try:
            for index, part in enumerate(parts):
                if index < len(messages):
                    messages[index] = await self._writer.edit(permit, messages[index], part)
                else:
                    reply_to = target.reply_to if index == 0 else None
                    target.message_ids.append(await self._writer.post(permit, part, reply_to))
            while len(target.message_ids) > len(parts):
                await self._writer.delete(permit, target.message_ids[-1])
                target.message_ids.pop()
        finally:
            if target.message_ids != before:
                await self._targets.save_turn(update.user_message_id, target)
