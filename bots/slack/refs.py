"""Where each thing of a conversation lives in Slack, kept in the database's platform_refs
(namespaced under "slack", beside the other platforms' refs), so clicks, switches and recovery work after a restart."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from core.conversation.refs import (
    message_refs,
    pause_refs,
    save_message_refs,
    save_pause_refs,
    save_turn_refs,
    turn_refs,
)

KEY = "slack"


@dataclass(frozen=True, slots=True)
class Slot:
    """The bot message of a turn and its follow-ups: recorded on the turn's user message, and
    shared by the versions of its answer (each shows in the same message)."""

    team: str
    channel: str
    thread_ts: str | None
    ts: str | None = None  # None until the live message is posted
    followups: tuple[str, ...] = ()
    branched: bool = False  # the turn answers an edited message
    final: int | None = None  # the answer whose finished state was rendered
    streamed: bool = False  # `ts` is a stream (chat.startStream) not yet stopped
    placeholder: bool = False  # `ts` is the first sign, posted before the turn was written

    def to_refs(self) -> dict[str, Any]:
        return {KEY: {**asdict(self), "followups": list(self.followups)}}

    @classmethod
    def from_refs(cls, refs: Any) -> Slot | None:
        data = refs.get(KEY) if isinstance(refs, dict) else None
        if not isinstance(data, dict) or not data.get("channel"):
            return None
        known = {k: v for k, v in data.items() if k in cls.__slots__}
        return cls(**{**known, "followups": tuple(known.get("followups") or ())})

    def moved(self, **changes: Any) -> Slot:
        return replace(self, **changes)


@dataclass(frozen=True, slots=True)
class Posted:
    """A single bot message: a clarify question, a compaction divider."""

    team: str
    channel: str
    ts: str


async def slot_of(message_id: int) -> Slot | None:
    """Where the turn of `message_id` (its user message or an answer of it) shows."""
    turn = await turn_refs(message_id, KEY)
    return Slot.from_refs({KEY: turn.refs}) if turn is not None else None


async def save_slot(message_id: int, slot: Slot) -> None:
    await save_turn_refs(message_id, KEY, slot.to_refs()[KEY])


async def pause_message(pause_id: int) -> Posted | None:
    return (await pause_post(pause_id))[0]


async def pause_post(pause_id: int) -> tuple[Posted | None, bool]:
    """Where the question was posted, and whether a post of it began (`save_pause_posting`)
    with no ts stored: its replica died in between, and the thread may hold it."""
    data = await pause_refs(pause_id, KEY)
    return _posted(data), bool(data.get("posting")) and not data.get("ts")


async def save_pause_posting(pause_id: int) -> None:
    await save_pause_refs(pause_id, KEY, {"posting": True})


async def save_pause_message(pause_id: int, posted: Posted) -> None:
    await save_pause_refs(pause_id, KEY, asdict(posted))


async def divider_of(summary_id: int) -> Posted | None:
    return _posted(await message_refs(summary_id, KEY))


async def save_divider(summary_id: int, posted: Posted) -> None:
    await save_message_refs(summary_id, KEY, asdict(posted))


def _posted(data: dict[str, Any] | None) -> Posted | None:
    return Posted(**data) if data and data.get("ts") else None
