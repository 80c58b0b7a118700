"""Bridge events and their SSE encoding (docs/bridge-protocol.md, "Events")."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

TERMINAL_EVENTS = frozenset({"done", "error"})
CHECKPOINT = "checkpoint"  # takes the id of the event before it (docs/bridge-protocol.md)
HEARTBEAT = b": keep-alive\n\n"


OBJECT_BYTES = 120  # what a kept event costs beyond its frame (the object, its id and name)


@dataclass(frozen=True, slots=True)
class BridgeEvent:
    """One event of a run; `id` is monotonic per run, from 1, without gaps (a checkpoint
    repeats the id before it). Kept as its encoded SSE frame only: `data` is read back from it."""

    id: int
    name: str
    frame: bytes

    @classmethod
    def make(cls, ident: int, name: str, data: dict[str, Any]) -> BridgeEvent:
        payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        return cls(ident, name, f"id: {ident}\nevent: {name}\ndata: {payload}\n\n".encode())

    @property
    def data(self) -> dict[str, Any]:
        payload = self.frame.split(b"\ndata: ", 1)[1]
        return json.loads(payload)

    @property
    def is_terminal(self) -> bool:
        return self.name in TERMINAL_EVENTS

    @property
    def size(self) -> int:
        """About the bytes it holds in a run's buffer: its frame and its object."""
        return len(self.frame) + OBJECT_BYTES

    def encode(self) -> bytes:
        """The SSE frame: `id:`, `event:` and one JSON `data:` line."""
        return self.frame
