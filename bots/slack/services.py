"""What the listeners and renderers share, built once by SlackBot and passed down.
"""

from __future__ import annotations

import asyncio
import weakref
from dataclasses import dataclass, field

from core.conversation.presenting import UsageShown
from core.conversation.titles import ShownTitles
from core.conversation.vocabulary import Bridge, Catalogue, Policy, RunPool
from core.edge.dedupe import Seen
from core.edge.event_ledger import EventLedger

from .delivery.budgets import OpenMessages, StreamTurns
from .delivery.first_sign import ShownStatuses
from .delivery.sender import SlackSender, WorkspaceFeatures
from .intake import Background

class SlotLocks:
    """One lock per bot message, so a version switch and a final render never interleave."""

    def __init__(self) -> None:
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    def of(self, channel: str, ts: str) -> asyncio.Lock:
        key = f"{channel}:{ts}"
        lock = self._locks.get(key)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[key] = lock
        return lock


@dataclass
class SlackServices:
    pool: RunPool
    catalogue: Catalogue
    bridge: Bridge
    sender: SlackSender
    background: Background
    policy: Policy = field(default_factory=Policy)
    seen: Seen = field(default_factory=Seen)
    ledger: EventLedger = field(default_factory=EventLedger)  # event ids, across replicas
    locks: SlotLocks = field(default_factory=SlotLocks)
    features: WorkspaceFeatures = field(default_factory=WorkspaceFeatures)
    open_live: OpenMessages = field(default_factory=OpenMessages)
    stream_turns: StreamTurns = field(default_factory=StreamTurns)  # who tries to stream first
    # who was told they may not talk to the bot, per conversation (this replica; the
    # database has it for all of them: policy.first_refusal)
    told_not_allowed: Seen = field(default_factory=Seen)
    titles: ShownTitles = field(default_factory=ShownTitles)
    usage: UsageShown = UsageShown.OFF  # SHOW_USAGE: what an answer's footer says of its calls
    statuses: ShownStatuses = field(default_factory=ShownStatuses)  # set by a turn's first sign
