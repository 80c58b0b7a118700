"""Per-session MEMORY.md / USER.md.

hermes-agent keeps one memory for the whole HERMES_HOME; a chat product must not let what
one conversation taught the agent leak into another's. Each session therefore gets its own
directory, `<HERMES_HOME>/bridge-sessions/<session>/memories/`, and its agent a memory store
pointing there. `shared_memory=True` restores hermes-agent's single shared memory.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from hermes_constants import reset_hermes_home_override, set_hermes_home_override
from tools.memory_tool import MemoryStore

_FILES = {"memory": "MEMORY.md", "user": "USER.md"}


class ScopedMemoryStore(MemoryStore):
    """hermes-agent's MemoryStore with its files under one session's home."""

    def __init__(self, home: Path, **limits: Any) -> None:
        super().__init__(**limits)
        self._home = home

    def _path_for(self, target: str) -> Path:
        return self._home / "memories" / _FILES["user" if target == "user" else "memory"]

    def load_from_disk(self) -> None:
        token = set_hermes_home_override(self._home)
        try:
            super().load_from_disk()
        finally:
            reset_hermes_home_override(token)

    def save_to_disk(self, target: str) -> None:
        token = set_hermes_home_override(self._home)
        try:
            super().save_to_disk(target)
        finally:
            reset_hermes_home_override(token)


class MemoryScopes:
    """Where each session's memory lives; reads and writes it for the memory endpoints."""

    def __init__(self, hermes_home: Path, shared: bool) -> None:
        self._home = hermes_home
        self._shared = shared

    def home_for(self, session_id: str) -> Path:
        if self._shared:
            return self._home
        return self._home / "bridge-sessions" / _safe_name(session_id)

    def install(self, agent: Any, session_id: str) -> None:
        """Point a fresh agent's memory store at the session's scope (before its first turn)."""
        store = getattr(agent, "_memory_store", None)
        if self._shared or store is None:
            return
        scoped = ScopedMemoryStore(
            self.home_for(session_id),
            memory_char_limit=store.memory_char_limit,
            user_char_limit=store.user_char_limit,
        )
        scoped.load_from_disk()
        agent._memory_store = scoped

    def read(self, session_id: str) -> dict[str, str]:
        """{"memory": MEMORY.md, "user": USER.md} as text ("" when absent)."""
        folder = self.home_for(session_id) / "memories"
        return {key: _read(folder / name) for key, name in _FILES.items()}

    def write(self, session_id: str, updates: dict[str, str]) -> dict[str, str]:
        """Replace the given files' text; returns both files afterwards."""
        folder = self.home_for(session_id) / "memories"
        folder.mkdir(parents=True, exist_ok=True)
        for key, text in updates.items():
            target = folder / _FILES[key]
            scratch = target.with_suffix(".md.tmp")
            scratch.write_text(text, encoding="utf-8")
            scratch.replace(target)
        return self.read(session_id)


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.exists() else ""


def _safe_name(session_id: str) -> str:
    readable = re.sub(r"[^A-Za-z0-9_-]", "_", session_id)[:80]
    digest = hashlib.sha256(session_id.encode()).hexdigest()[:12]
    return f"{readable}-{digest}"
