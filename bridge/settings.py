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
    run_buffer_bytes: int = 1048576  # encoded events kept in memory per run (oldest go first)
    max_iterations: int = 90
    # Off by default: every chat session gets its own MEMORY.md / USER.md.
    shared_memory: bool = False
    # Every route but GET /health needs `Authorization: Bearer <token>`; None: open, and then
    # the Bridge only binds to loopback.
    token: str | None = None
    # The environment variables a run's `model.api_key_env` may name (none by default).
    key_envs: tuple[str, ...] = ()
    # Named in GET /health, so a supervisor tells its own child from another Bridge on the
    # port; empty: a fresh id is made when the app is built.
    instance: str = ""
    log_level: str = "INFO"
    log_format: str = "text"

    def secrets(self, env: Mapping[str, str]) -> tuple[str, ...]:
        """What the Bridge's logs must never show: its token, the default key and the value of
        every key it may use."""
        values = (self.token, self.openai_api_key, *(env.get(name) for name in self.key_envs))
        return tuple(v for v in values if v)

    def to_env(self) -> dict[str, str]:
        """The variables `from_env` reads back as these settings (how `serve` configures its
        child; the instance and the timings that are no setting stay out)."""
        values = {
            "BRIDGE_HOST": self.host, "BRIDGE_PORT": str(self.port),
            "HERMES_HOME": self.hermes_home, "OPENAI_BASE_URL": self.openai_base_url,
            "OPENAI_API_KEY": self.openai_api_key, "HERMES_MODEL": self.model,
            "BRIDGE_TOOLSETS": ",".join(self.toolsets),
            "BRIDGE_SHARED_MEMORY": "true" if self.shared_memory else "false",
            "BRIDGE_POOL_SIZE": str(self.pool_size),
            "BRIDGE_RUN_BUFFER_BYTES": str(self.run_buffer_bytes),
            "CLARIFY_FALLBACK_HOURS": repr(self.clarify_fallback_seconds / 3600.0),
            "BRIDGE_TOKEN": self.token, "BRIDGE_KEY_ENVS": ",".join(self.key_envs),
            "LOG_LEVEL": self.log_level, "LOG_FORMAT": self.log_format,
        }
        return {key: value for key, value in values.items() if value}

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> BridgeSettings:
        """Read BRIDGE_HOST, BRIDGE_PORT, HERMES_HOME, OPENAI_BASE_URL, OPENAI_API_KEY,
        HERMES_MODEL, BRIDGE_TOOLSETS (comma list), BRIDGE_SHARED_MEMORY (1/true),
        BRIDGE_POOL_SIZE, BRIDGE_RUN_BUFFER_BYTES, CLARIFY_FALLBACK_HOURS, BRIDGE_TOKEN, BRIDGE_KEY_ENVS (comma list),
        LOG_LEVEL and LOG_FORMAT."""
        text = {key: env.get(key, "").strip() for key in _ENV_KEYS}
        toolsets = _names(text["BRIDGE_TOOLSETS"])
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
            run_buffer_bytes=int(text["BRIDGE_RUN_BUFFER_BYTES"] or cls.run_buffer_bytes),
            clarify_fallback_seconds=(
                float(text["CLARIFY_FALLBACK_HOURS"]) * 3600.0
                if text["CLARIFY_FALLBACK_HOURS"] else cls.clarify_fallback_seconds
            ),
            token=text["BRIDGE_TOKEN"] or None,
            key_envs=_names(text["BRIDGE_KEY_ENVS"]),
            log_level=text["LOG_LEVEL"] or cls.log_level,
            log_format=text["LOG_FORMAT"] or cls.log_format,
        )


def _names(comma_list: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in comma_list.split(",") if name.strip())


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
    "BRIDGE_RUN_BUFFER_BYTES",
    "CLARIFY_FALLBACK_HOURS",
    "BRIDGE_TOKEN",
    "BRIDGE_KEY_ENVS",
    "LOG_LEVEL",
    "LOG_FORMAT",
)
