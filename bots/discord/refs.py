"""Where things show on Discord, read from the database (then cached): the channel of each
session, the messages of each turn (its `Slot`), the message of each clarify question.

Refs live in the `platform_refs` columns: a turn's messages on its USER node, as on every
platform (`core.conversation.refs.save_turn_refs`: shared by every version of the answer), a
question's message on its ClarifyPause, a divider on its SYSTEM summary node. So a new process
finds and edits the same messages after a restart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.conversation import bindings, refs
from core.conversation.vocabulary import Platform
from core.edge.dedupe import Recent

KEY = "discord"


@dataclass(frozen=True, slots=True)
class Asked:
    """Where the person's message is: its channel (the message a thread was opened on is in
    the parent channel; a forum post's starter message is in the post) and its id."""

    channel_id: int
    message_id: int


@dataclass(slots=True)
class Slot:
    """The Discord messages of one turn (head first), in their channel."""

    channel_id: int
    message_ids: list[int] = field(default_factory=list)
    reply_to: int | None = None  # the user's message, when it is in the same channel
    branched: bool = False  # the user edited their message: this turn is a new branch
    asked: Asked | None = None  # the user's message (its reactions)


class DiscordRefs:
    def __init__(self) -> None:
        self._channels: Recent[int, int | None] = Recent()
        self._turns: Recent[int, Slot] = Recent()
        self._asked_in: Recent[int, int] = Recent()  # a person's message -> its channel

    def asking(self, message_id: int, channel_id: int) -> None:
        """A person's message in `channel_id` is about to become a turn (said before the
        turn is written, so its first update already knows where the message is)."""
        self._asked_in.put(message_id, channel_id)

    async def channel_of(self, session_id: int) -> int | None:
        """The Discord channel (thread or DM) a session is bound to; None if not on Discord."""
        if session_id in self._channels:
            return self._channels.get(session_id)
        binding = await bindings.latest_binding(session_id, Platform.DISCORD)
        channel = int(binding.thread or binding.channel) if binding else None
        self._channels.put(session_id, channel)
        return channel

    def bound(self, session_id: int, channel_id: int) -> None:
        """The bot bound a session to a channel just now."""
        self._channels.put(session_id, channel_id)

    async def turn(self, session_id: int, user_message_id: int) -> Slot | None:
        cached = self._turns.get(user_message_id)
        if cached is not None:
            return cached
        if session_id in self._channels and self._channels.get(session_id) is None:
            return None  # a session of another platform: no query for each of its updates
        user = await refs.turn_refs(user_message_id, KEY)
        if user is None:
            return None
        slot = _turn_from(user.refs)
        if slot is None:
            channel = await self.channel_of(session_id)
            if channel is None:
                return None
            slot = Slot(channel, reply_to=_reply_to(user, channel), branched=user.edited)
        slot.asked = await self._asked(session_id, user, slot)
        self._turns.put(user_message_id, slot)
        return slot

    async def _asked(self, session_id: int, user: refs.TurnRefs,
                     slot: Slot) -> Asked | None:
        """Where the user's message is: as the conversation said, as saved, or else in the
        turn's channel, but in the parent channel for the message a thread was opened on."""
        posted = user.platform_message_id
        if not posted.isdigit():
            return None
        message = int(posted)
        channel = self._asked_in.get(message) or _number(user.refs.get("asked"))
        if channel is None and message == slot.channel_id:
            binding = await bindings.latest_binding(session_id, Platform.DISCORD)
            channel = _number(binding.channel) if binding else None
        return Asked(channel or slot.channel_id, message)

    async def save_turn(self, user_message_id: int, slot: Slot) -> None:
        saved = {"channel": str(slot.channel_id), "messages": [str(m) for m in slot.message_ids],
                 "reply_to": str(slot.reply_to or ""), "branched": slot.branched,
                 "asked": str(slot.asked.channel_id) if slot.asked else ""}
        await refs.save_turn_refs(user_message_id, KEY, saved)

    async def pause(self, pause_id: int) -> dict[str, Any]:
        return await refs.pause_refs(pause_id, KEY)

    async def save_pause(self, pause_id: int, saved: dict[str, Any]) -> None:
        await refs.save_pause_refs(pause_id, KEY, saved)

    async def summary_posted(self, summary_id: int) -> bool:
        saved = await refs.message_refs(summary_id, KEY)
        return saved is None or bool(saved)

    async def save_summary(self, summary_id: int, channel_id: int, message_id: int) -> None:
        await refs.save_message_refs(summary_id, KEY,
                                     {"channel": str(channel_id), "message": str(message_id)})


def _turn_from(saved: dict[str, Any]) -> Slot | None:
    if not saved.get("channel"):
        return None
    reply_to = int(saved["reply_to"]) if saved.get("reply_to") else None
    messages = [int(m) for m in saved.get("messages", [])]
    return Slot(int(saved["channel"]), messages, reply_to, bool(saved.get("branched")))


def _number(value: Any) -> int | None:
    text = str(value or "")
    return int(text) if text.isdigit() else None


def _reply_to(user: refs.TurnRefs, channel: int) -> int | None:
    # A thread opened on a message has that message's id; a reply can't cross channels.
    posted = user.platform_message_id
    mid = int(posted) if posted.isdigit() else None
    return mid if mid is not None and mid != channel else None
