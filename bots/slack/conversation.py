"""A user's message becomes a run of its thread's session; an edit becomes a branch
(`core.conversation.turns` decides; this says it in the thread).

Retries and double deliveries start nothing twice: the Slack ts of every user message is
stored on its node, so one that is already there (or arrives while it is being stored) is
ignored, on any replica.
"""

from __future__ import annotations

from core.attachments import Limits
from core.conversation import bindings, turns, written
from core.conversation.refusals import BUSY, EDIT_BUSY
from core.errors import Busy
from core.models import ChatSession
from core.sessions import session_for_thread

from . import ids
from .blocks import Payload, actions, button, section
from .files import SlackFiles
from .inbound import Incoming
from .places import Place
from .refs import Slot
from .services import Services


class Conversations:
    def __init__(self, services: Services, files: SlackFiles, limits: Limits) -> None:
        self._services = services
        self._files = files
        self._limits = limits

    async def message(self, incoming: Incoming, create: bool) -> None:
        """Start the run that answers `incoming` (creating the session when asked); its
        files skipped (or that nothing in it could be read) are said in the thread first."""
        session = await self._session(incoming.place, create)
        if session is None or await turns.user_node(session.id, incoming.ts):
            return
        message = await written.read(incoming.text, self._files.offers(incoming.files),
                                     self._limits)
        for notice in message.notices:
            await self._say(incoming.place, Payload(notice, [section(notice)]))
        if not message.text:
            return
        slot = Slot(incoming.place.team, incoming.place.channel, incoming.place.reply_thread)
        try:
            await turns.write(self._services.pool, session.id, message.text, author=incoming.user,
                              platform_message_id=incoming.ts, platform_refs=slot.to_refs(),
                              files=message.files)
        except Busy:
            if not await turns.user_node(session.id, incoming.ts):  # not a duplicate
                await self.refuse_busy(session.id, incoming.place)

    async def edit(self, incoming: Incoming) -> None:
        """A user edited a message the bot answered: answer the new text in a new branch."""
        session = await bindings.bound_session(incoming.place.key)
        node = await turns.user_node(session.id, incoming.ts) if session else None
        if session is None or node is None:
            return
        slot = Slot(incoming.place.team, incoming.place.channel, incoming.place.reply_thread,
                    branched=True)
        try:
            await turns.edit(self._services.pool, node, incoming.text, author=incoming.user,
                             platform_message_id=incoming.ts, platform_refs=slot.to_refs())
        except Busy:
            await self.refuse_busy(session.id, incoming.place, EDIT_BUSY)

    async def refuse_busy(self, session_id: int, place: Place, text: str = BUSY) -> None:
        """Say the conversation is busy, with a Stop button for the run in the way (whichever
        replica drives it: Stop works from anywhere)."""
        blocks = [section(text)]
        if (run_id := await turns.run_in_flight(session_id)) is not None:
            blocks.append(actions(button("Stop", ids.STOP, ids.run_value(run_id), "danger")))
        await self._say(place, Payload(text, blocks))

    async def _say(self, place: Place, payload: Payload) -> None:
        await self._services.sender.post(place.team, place.channel, place.reply_thread, payload)

    async def _session(self, place: Place, create: bool) -> ChatSession | None:
        if not create:
            return await bindings.bound_session(place.key)
        session, _ = await session_for_thread(place.key)
        return session
