"""The Bridge's settings: built once at the composition root and passed down."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

DEFAULT_TOOLSETS: tuple[str, ...] = ("todo", "clarify", "memory")


@dataclass(frozen=True)
class BridgeSettings:
    """Everything the Bridge needs; no module of bridge/ reads the environment itself."""

    host: str = "127.0.0.1"
    port: int = 18731
    hermes_home: str = "data/hermes"
    openai_base_url: str | None = None
    openai_api_key: str | None = None
    model: str | None = None
    # Safe default: nothing that touches the host (no terminal, file, browser, web).
    toolsets: tuple[str, ...] = DEFAULT_TOOLSETS
    pool_size: int = 8  # agents kept (least recently used goes first)
    heartbeat_seconds: float = 15.0
    clarify_fallback_seconds: float = 86400.0  # an unanswered clarify ends the run after 24 h
    retention_seconds: float = 90000.0  # 25 h after a run ends
    max_iterations: int = 90
    # Off by default: every chat session gets its own MEMORY.md / USER.md.
    shared_memory: bool = False

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> BridgeSettings:
        """Read BRIDGE_HOST, BRIDGE_PORT, HERMES_HOME, OPENAI_BASE_URL, OPENAI_API_KEY,
        HERMES_MODEL, BRIDGE_TOOLSETS (comma list), BRIDGE_SHARED_MEMORY (1/true),
        BRIDGE_POOL_SIZE and CLARIFY_FALLBACK_HOURS."""
        text = {key: env.get(key, "").strip() for key in _ENV_KEYS}
        toolsets = tuple(t.strip() for t in text["BRIDGE_TOOLSETS"].split(",") if t.strip())
        return cls(
            host=text["BRIDGE_HOST"] or cls.host,
            port=int(text["BRIDGE_PORT"] or cls.port),
            hermes_home=text["HERMES_HOME"] or cls.hermes_home,
            openai_base_url=text["OPENAI_BASE_URL"] or None,
            openai_api_key=text["OPENAI_API_KEY"] or None,
            model=text["HERMES_MODEL"] or None,
            toolsets=toolsets or DEFAULT_TOOLSETS,
            shared_memory=text["BRIDGE_SHARED_MEMORY"].lower() in ("1", "true", "yes"),
            pool_size=int(text["BRIDGE_POOL_SIZE"] or cls.pool_size),
            clarify_fallback_seconds=(
                float(text["CLARIFY_FALLBACK_HOURS"]) * 3600.0
                if text["CLARIFY_FALLBACK_HOURS"] else cls.clarify_fallback_seconds
            ),
        )


_ENV_KEYS = (
    "BRIDGE_HOST",
    "BRIDGE_PORT",
    "HERMES_HOME",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "HERMES_MODEL",
    "BRIDGE_TOOLSETS",
    "BRIDGE_SHARED_MEMORY",
    "BRIDGE_POOL_SIZE",
    "CLARIFY_FALLBACK_HOURS",
)
