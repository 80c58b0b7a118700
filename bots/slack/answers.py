"""Show a finished turn in its slot: the answer replaces the live message (or, when that
message cannot take it at once, comes as a new one), follow-up messages are reused in place,
added or deleted, and a very long answer is uploaded as a file."""

from __future__ import annotations

import asyncio

from core.conversation import views
from core.conversation.views import Versions
from core.runtime.updates import RunUpdate

from . import refs
from .answer_view import AnswerLayout, render_answer
from .blocks import Payload
from .refs import Slot
from .services import Services


async def show_answer(services: Services, update: RunUpdate, slot: Slot, upload: bool = False,
                      versions: Versions | None = None, shown: Payload | None = None) -> Slot:
    """Render `update` (a finished turn) into `slot`; returns and stores the slot as it is now.
    `shown` is what the message already shows: an identical edit is not sent again."""
    assert slot.ts is not None, "the live message is posted before the answer"
    versions = versions or await views.versions(update.message_id)
    layout = render_answer(update, versions, slot.branched)
    async with services.locks.of(slot.channel, slot.ts):
        if layout.main != shown:
            await services.sender.edit(slot.team, slot.channel, slot.ts, lambda: layout.main)
        return await show_rest(services, update, slot, layout, upload)


async def post_answer(services: Services, update: RunUpdate, slot: Slot,
                      versions: Versions) -> Slot:
    """The answer as a new message in the thread, for a turn whose own message cannot take it
    at once (its budget is spent elsewhere) or that has none: an answer never waits behind
    progress. The new message becomes the turn's."""
    layout = render_answer(update, versions, slot.branched)
    ts = await services.sender.post(slot.team, slot.channel, slot.thread_ts, layout.main)
    return await show_rest(services, update, slot.moved(ts=ts, followups=()), layout, upload=True)


async def show_rest(services: Services, update: RunUpdate, slot: Slot, layout: AnswerLayout,
                    upload: bool) -> Slot:
    """The follow-ups and the attachment of an answer whose first message is shown."""
    followups = await _followups(services, slot, layout.followups)
    if upload and layout.attachment:
        await services.sender.upload(slot.team, slot.channel, slot.thread_ts, "answer.md",
                                     layout.attachment.encode(), "📎 The full answer")
    shown = slot.moved(followups=followups, final=True)
    await refs.save_slot(update.message_id, shown)
    return shown


async def _followups(services: Services, slot: Slot, parts: list[Payload]) -> tuple[str, ...]:
    sender, used = services.sender, []
    for index, part in enumerate(parts):
        if index < len(slot.followups):
            await sender.edit(slot.team, slot.channel, slot.followups[index], lambda p=part: p)
            used.append(slot.followups[index])
        else:
            used.append(await sender.post(slot.team, slot.channel, slot.thread_ts, part))
    surplus = slot.followups[len(parts):]
    await asyncio.gather(*(sender.delete(slot.team, slot.channel, ts) for ts in surplus))
    return tuple(used)
