"""Bridge events and their SSE encoding (docs/bridge-protocol.md, "Events")."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

TERMINAL_EVENTS = frozenset({"done", "error"})
HEARTBEAT = b": keep-alive\n\n"


@dataclass(frozen=True, slots=True)
class BridgeEvent:
    """One event of a run; `id` is monotonic per run, from 1, without gaps."""

    id: int
    name: str
    data: dict[str, Any]

    @property
    def is_terminal(self) -> bool:
        return self.name in TERMINAL_EVENTS

    def encode(self) -> bytes:
        """The SSE frame: `id:`, `event:` and one JSON `data:` line."""
        payload = json.dumps(self.data, ensure_ascii=False, separators=(",", ":"))
        return f"id: {self.id}\nevent: {self.name}\ndata: {payload}\n\n".encode()
