"""Each run's presence in its channel, kept in step with the run through the outbox.

`RunFollower` follows every run of the pool (one subscription, latest state wins), so runs
this process did not start (recovered after a restart, started from the admin API) show too:
where to show them is read from the database (bots/discord/refs.py), and runs of sessions not
on Discord are skipped. It hands each update to the presenters of a turn's messages (edited in
place while it runs, then the answer), of its clarify questions and tool approvals (each its
own message, posted once, edited when answered or closed) and of its dividers (where the
agent compacted its context, the summary behind a button). Once a turn's messages show an
update, the reaction on the person's message follows (reactions.py); as a turn ends, its
thread's name follows the session's title (titles.py): both on outboxes and budgets of their
own (`Outboxes`), so they never delay a message. `Notices` posts the one-off messages
(refusals, greetings).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable
from functools import partial

import discord

from bots.discord.delivery.budgets import Permit
from bots.discord.delivery.outbox import Outbox, Outboxes
from bots.discord.delivery.reactions import ReactionPresenter
from bots.discord.delivery.titles import ThreadTitlePresenter
from bots.discord.delivery.writer import Writer
from bots.discord.refs import DiscordRefs, Slot
from bots.discord.render.approval import approval_part
from bots.discord.render.clarify import clarify_part
from bots.discord.render.pages import divider_part
from bots.discord.render.parts import Part
from bots.discord.render.turn import TurnContext, turn_parts
from core.conversation import turns, views
from core.conversation.presenting import UsageShown
from core.conversation.vocabulary import PauseKind, PauseStatus, PauseView, RunPool, RunUpdate
from core.edge.dedupe import Recent, Seen

log = logging.getLogger(__name__)

class TurnPresenter:
    """A turn's messages; once they show an update, the reaction on the person's message
    follows (after the answer's write, on a budget of its own)."""

    def __init__(self, refs: DiscordRefs, writer: Writer, outbox: Outbox,
                 reactions: ReactionPresenter, usage: UsageShown = UsageShown.OFF) -> None:
        self._refs = refs
        self._usage = usage  # SHOW_USAGE
        self._writer = writer
        self._outbox = outbox
        self._reactions = reactions
        self._offered: Recent[int, str] = Recent()  # turn -> signature of the live view offered

    def show(self, update: RunUpdate, slot: Slot) -> None:
        """Queue the turn's messages to show `update` (a live view equal to the last is skipped)."""
        if not update.finished:
            signature = turn_parts(update, TurnContext(branched=slot.branched))[0].signature()
            if self._offered.get(update.user_message_id) == signature:
                return
            self._offered.put(update.user_message_id, signature)
        else:
            self._offered.pop(update.user_message_id)
        job = partial(self._render, update, slot)
        self._outbox.offer(slot.channel_id, ("turn", update.user_message_id), job)

    async def _render(self, update: RunUpdate, slot: Slot, permit: Permit) -> None:
        context = TurnContext(branched=slot.branched)
        if update.finished:
            context = TurnContext(await views.versions(update.message_id), slot.branched,
                                  self._usage)
        await self._sync(update, slot, turn_parts(update, context), permit)
        if slot.asked is not None:
            self._reactions.show(slot.asked, update.status)
        if update.finished and slot.message_ids:
            await turns.save_platform_id(update.message_id, str(slot.message_ids[0]))

    async def _sync(self, update: RunUpdate, slot: Slot, parts: list[Part],
                    permit: Permit) -> None:
        """Edit the turn's messages in place, post the extra parts, delete the surplus ones."""
        before = list(slot.message_ids)
        messages = slot.message_ids
        try:
            for index, part in enumerate(parts):
                if index < len(messages):
                    messages[index] = await self._writer.edit(permit, messages[index], part)
                else:
                    reply_to = slot.reply_to if index == 0 else None
                    slot.message_ids.append(await self._writer.post(permit, part, reply_to))
            while len(slot.message_ids) > len(parts):
                await self._writer.delete(permit, slot.message_ids[-1])
                slot.message_ids.pop()
        finally:
            if slot.message_ids != before:
                await self._refs.save_turn(update.user_message_id, slot)


OPEN = str(PauseStatus.UNANSWERED)


def shown_state(pause: PauseView, run_finished: bool) -> str:
    """What the question's message shows: an open question closes when its run ends."""
    if pause.status == PauseStatus.UNANSWERED and run_finished:
        return "CLOSED"
    return str(pause.status)


def pause_part(pause: PauseView, run_finished: bool) -> Part:
    """A clarify question's message, or a tool approval's."""
    render = approval_part if pause.kind == PauseKind.APPROVAL else clarify_part
    return render(pause, run_finished)


class PausePresenter:
    """Clarify questions and tool approvals: each its own message, posted once, edited when
    answered or closed (where it lives is kept with the pause, so a restart edits it)."""

    def __init__(self, refs: DiscordRefs, writer: Writer, outbox: Outbox) -> None:
        self._refs = refs
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
            refs = await self._refs.pause(pause.pause_id)
            if refs.get("shown") == state:
                return  # shown before a restart
            part = pause_part(pause, run_finished)
            if refs.get("message"):
                message_id = await self._writer.edit(permit, int(refs["message"]), part)
            else:  # posted once, even by a replica killed before it stored where
                message_id = await self._writer.post(permit, part, once=f"hermes-pause-{pause.pause_id}")
                if state != OPEN:  # the first copy may show it open
                    message_id = await self._writer.edit(permit, message_id, part)
        except BaseException:
            self._offered.pop(pause.pause_id)  # offer it again with the next update
            raise
        refs = {"channel": str(channel_id), "message": str(message_id), "shown": state}
        await self._refs.save_pause(pause.pause_id, refs)


class DividerPresenter:
    def __init__(self, refs: DiscordRefs, writer: Writer, outbox: Outbox) -> None:
        self._refs = refs
        self._writer = writer
        self._outbox = outbox
        self._offered = Seen()

    def show(self, summary_id: int, channel_id: int) -> None:
        if self._offered.first(summary_id):
            job = partial(self._post, summary_id, channel_id)
            self._outbox.offer(channel_id, ("summary", summary_id), job)

    async def _post(self, summary_id: int, channel_id: int, permit: Permit) -> None:
        if await self._refs.summary_posted(summary_id):
            return
        message_id = await self._writer.post(permit, divider_part(summary_id),
                                             once=f"hermes-divider-{summary_id}")
        await self._refs.save_summary(summary_id, channel_id, message_id)


class Notices:
    def __init__(self, writer: Writer, outbox: Outbox) -> None:
        self._writer = writer
        self._outbox = outbox

    def post(self, channel_id: int, part: Part, *, key: Hashable, reply_to: int | None = None) -> None:
        """Queue `part` as a new message (`key` makes it one of a kind: a replay replaces it)."""
        self._outbox.offer(channel_id, ("notice", key), partial(self._post, part, reply_to))

    async def _post(self, part: Part, reply_to: int | None, permit: Permit) -> None:
        await self._writer.post(permit, part, reply_to)


class RunFollower:
    """Routes every run update to the presenters of its turn (and its reaction), questions,
    dividers and, as it ends, of its thread's name."""

    def __init__(self, pool: RunPool, refs: DiscordRefs, writer: Writer, outboxes: Outboxes,
                 client: discord.Client, cached: Callable[[int], object | None],
                 usage: UsageShown = UsageShown.OFF) -> None:
        self._pool = pool
        self._refs = refs
        outbox = outboxes.messages
        self.turns = TurnPresenter(refs, writer, outbox,
                                   ReactionPresenter(writer, outboxes.reactions), usage)
        self.pauses = PausePresenter(refs, writer, outbox)
        self.dividers = DividerPresenter(refs, writer, outbox)
        self.titles = ThreadTitlePresenter(client, writer, outboxes.renames, cached)

    async def run(self) -> None:
        """Route updates until cancelled."""
        subscription = self._pool.subscribe()
        try:
            while not subscription.closed:
                for update in await subscription.next():
                    await self._route_safely(update)
        finally:
            self._pool.unsubscribe(subscription)

    async def _route_safely(self, update: RunUpdate) -> None:
        try:
            await self.route(update)
        except Exception:  # one bad update must not stop the others from showing
            log.exception("could not show a run update", extra={"run_id": update.run_id})

    async def route(self, update: RunUpdate) -> None:
        """Queue what `update` changes: the turn's messages, its question and tool approval,
        its dividers."""
        slot = await self._refs.turn(update.session_id, update.user_message_id)
        if slot is None:
            return
        self.turns.show(update, slot)
        for pause in (update.pause, update.approval):
            if pause is not None:
                self.pauses.show(pause, update.finished, slot.channel_id)
        for summary_id in update.summary_ids:
            self.dividers.show(summary_id, slot.channel_id)
        if update.finished:
            await self.titles.show(update.session_id, slot.channel_id)
