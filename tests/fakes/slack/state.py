"""Everything the Web API methods read and change, in one place."""

from __future__ import annotations

import itertools
import secrets
from dataclasses import dataclass, field
from typing import Any

from .limits import Clock, SlackLimits
from .model import Identity, Workspace
from .wire import ApiError


@dataclass
class StoredFile:
    id: str
    filename: str
    length: int
    title: str | None = None
    alt_txt: str | None = None
    snippet_type: str | None = None
    content: bytes | None = None  # None until the upload URL received it
    mimetype: str = "application/octet-stream"

    def to_api(self, base_url: str) -> dict[str, Any]:
        return {
            "id": self.id, "name": self.filename, "title": self.title or self.filename,
            "size": len(self.content or b""), "mimetype": self.mimetype,
            "permalink": f"{base_url}files/{self.id}/{self.filename}",
        }


@dataclass
class SlackState:
    clock: Clock
    limits: SlackLimits
    identity: Identity
    workspace: Workspace
    base_url: str = ""  # http://127.0.0.1:PORT/ once serving
    views: dict[str, dict[str, Any]] = field(default_factory=dict)
    triggers: dict[str, float] = field(default_factory=dict)  # trigger_id -> issued at
    used_triggers: set[str] = field(default_factory=set)
    files: dict[str, StoredFile] = field(default_factory=dict)
    uploads: dict[str, str] = field(default_factory=dict)  # upload id -> file id
    tickets: set[str] = field(default_factory=set)  # unused socket mode tickets
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids):08d}"

    def new_trigger_id(self) -> str:
        trigger_id = f"{next(self._ids)}.{secrets.randbelow(10**9)}.{secrets.token_hex(8)}"
        self.triggers[trigger_id] = self.clock()
        return trigger_id

    def exchange_trigger(self, trigger_id: Any) -> None:
        """A trigger works once, within `trigger_ttl` seconds of being issued."""
        if trigger_id in self.used_triggers:
            raise ApiError("exchanged_trigger_id")
        if trigger_id not in self.triggers:
            raise ApiError("invalid_trigger_id")
        if self.clock() - self.triggers[trigger_id] > self.limits.trigger_ttl:
            raise ApiError("expired_trigger_id")
        self.used_triggers.add(trigger_id)
