"""What the listeners and renderers share, built once by SlackBot and passed down.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field

from core.bridge.port import Bridge
from core.catalogue import Catalogue
from core.conversation.dedupe import Seen
from core.conversation.policy import Policy
from core.conversation.event_ledger import EventLedger
from core.runtime.pool import RunPool

from .delivery.budgets import OpenMessages
from .delivery.sender import SlackSender, WorkspaceFeatures
from .intake import Background

REMEMBERED = 10_000  # threads whose title this process remembers having set


class ShownTitles:
    """The title each thread was last given (so an unchanged title costs no call)."""

    def __init__(self, limit: int = REMEMBERED) -> None:
        self._titles: OrderedDict[tuple[str, str, str], str] = OrderedDict()
        self._limit = limit

    def changed(self, key: tuple[str, str, str], title: str) -> bool:
        if self._titles.get(key) == title:
            return False
        self._titles[key] = title
        self._titles.move_to_end(key)
        while len(self._titles) > self._limit:
            self._titles.popitem(last=False)
        return True


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
    # who was told they may not talk to the bot, per conversation (this replica; the
    # database has it for all of them: policy.first_refusal)
    told_not_allowed: Seen = field(default_factory=Seen)
    titles: ShownTitles = field(default_factory=ShownTitles)
