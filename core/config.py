"""Settings of the whole service, read once at the composition root."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from urllib.parse import unquote, urlsplit

from core.chat.attachments import (
    DEFAULT_MAX_BYTES,
    DEFAULT_PARSE_SECONDS,
    DEFAULT_PDF_PAGES,
    DEFAULT_PER_MESSAGE,
    HISTORY_ATTACHMENT_BYTES,
    MAX_HISTORY_ATTACHMENT_BYTES,
    Limits,
)
from core.chat.channel_settings import BUSY_MODES, ChannelDefaults
from core.chat.policy import Policy
from core.chat.recurrence import zone
from core.chat.thread_context import DEFAULT_MESSAGES, MAX_MESSAGES
from core.conversation.presenting import UsageShown
from core.edge.platform_links import DOWN_SECONDS
from core.edge.urls import Origins, redacted_url
from core.errors import InvalidInput
from core.store.db import check_url
from core.store.outage import Patience
from core.usage.limits import KEYS, LimitKey, setting_name

DEFAULT_DATABASE_URL = "sqlite://data/hermes-chat.sqlite3"
DISCORD_CDN_HOSTS = ("cdn.discordapp.com", "media.discordapp.net")


@dataclass(frozen=True, slots=True)
class Settings:
    """Every key of `.env.example`; built by `Settings.from_env` and passed down."""

    database_url: str = DEFAULT_DATABASE_URL
    database_outage_timeout: int = 180
    hermes_bridge_url: str | None = None
    slack_bot_token: str | None = None
    slack_signing_secret: str | None = None
    slack_app_token: str | None = None
    discord_token: str | None = None
    discord_channels: tuple[str, ...] = ()
    admin_token: str | None = None
    admin_unlimited_token: str | None = None  # like ADMIN_TOKEN; its runs have no spend limit
    admin_host: str = "127.0.0.1"
    admin_port: int = 8080
    public_url: str | None = None  # where Slack reaches the admin server (https://...)
    bridge_host: str = "127.0.0.1"
    bridge_port: int = 18731
    bridge_token: str | None = None
    bridge_key_envs: tuple[str, ...] = ()
    hermes_home: str = "data/hermes"
    bridge_toolsets: tuple[str, ...] = ()
    bridge_shared_memory: bool = False
    bridge_pool_size: int = 8
    clarify_fallback_hours: int = 24
    bridge_run_buffer_bytes: int = 1048576
    run_buffer_bytes: int = 262144
    max_active_runs: int = 5
    run_lease_seconds: int = 30
    runs_per_user_per_minute: int = 10
    attachment_max_bytes: int = DEFAULT_MAX_BYTES
    attachments_per_message: int = DEFAULT_PER_MESSAGE
    history_attachment_bytes: int = HISTORY_ATTACHMENT_BYTES
    attachment_parse_seconds: int = DEFAULT_PARSE_SECONDS
    attachment_pdf_pages: int = DEFAULT_PDF_PAGES
    thread_context_messages: int = DEFAULT_MESSAGES
    conversation_actions: str = "asker"
    busy_mode: str = "refuse"  # a message while the thread's run works (channel settings)
    chat_admins: tuple[str, ...] = ()
    allowed_users: tuple[str, ...] = ()
    discord_allowed_roles: tuple[str, ...] = ()
    show_usage: str = UsageShown.OFF
    # The time zone of a scheduled prompt whose author names none and whose platform knows
    # none of theirs (an IANA name; docs/schedules.md).
    schedule_timezone: str = "UTC"
    # Spend limits (core/usage/limits.py): 0 = none. Tokens are prompt + completion; cost is
    # at MODELS_FILE's prices. The operators' own limits (/api/limits) take their place.
    limit_user_day_tokens: int = 0
    limit_user_day_cost: float = 0.0
    limit_user_month_tokens: int = 0
    limit_user_month_cost: float = 0.0
    limit_channel_day_tokens: int = 0
    limit_channel_day_cost: float = 0.0
    limit_channel_month_tokens: int = 0
    limit_channel_month_cost: float = 0.0
    limit_workspace_day_tokens: int = 0
    limit_workspace_day_cost: float = 0.0
    limit_workspace_month_tokens: int = 0
    limit_workspace_month_cost: float = 0.0
    models_file: str = "models.toml"
    skills_dir: str = "skills/"
    openai_base_url: str | None = None
    openai_api_key: str | None = None
    hermes_model: str | None = None
    slack_api_url: str = "https://slack.com/api/"
    slack_suggested_prompts: tuple[str, ...] = ()
    discord_api_url: str = "https://discord.com/api/v10"
    discord_gateway_url: str | None = None
    discord_shard_count: int = 0  # 0: Discord's recommendation (GET /gateway/bot)
    discord_cdn_hosts: tuple[str, ...] = DISCORD_CDN_HOSTS
    platform_down_seconds: int = DOWN_SECONDS
    intake_retry_seconds: int = 60  # a message or scheduled time a replica took but never finished: again after
    log_format: str = "text"
    log_level: str = "INFO"

    def secrets(self) -> tuple[str, ...]:
        """The values that must never be logged: tokens, the signing secret, the API key and
        the passwords of DATABASE_URL and HERMES_BRIDGE_URL (as written and decoded)."""
        passwords = (p for url in (self.database_url, *self.bridge_url.split(","))
                     for p in _url_password(url.strip()))
        values = (self.slack_bot_token, self.slack_signing_secret, self.slack_app_token,
                  self.discord_token, self.admin_token, self.admin_unlimited_token,
                  self.openai_api_key, self.bridge_token,
                  *passwords)
        return tuple(v for v in values if v)

    @property
    def database_patience(self) -> Patience:
        """How long a run waits for an unreachable database before recovery takes it over."""
        return Patience(give_up_after=float(self.database_outage_timeout))

    @property
    def bridge_url(self) -> str:
        """Where the runtime finds the Bridge: the configured one or the one we start."""
        return self.hermes_bridge_url or f"http://{self.bridge_host}:{self.bridge_port}"

    def slack_events_url(self, path: str) -> str:
        """The URL of `path` (the Slack events route) as Slack must be given it: under
        PUBLIC_URL, else on ADMIN_HOST:ADMIN_PORT (reachable by Slack only through a proxy)."""
        base = self.public_url or f"http://{self.admin_host}:{self.admin_port}"
        return base.rstrip("/") + path

    @property
    def attachment_limits(self) -> Limits:
        """ATTACHMENT_MAX_BYTES, ATTACHMENTS_PER_MESSAGE, ATTACHMENT_PARSE_SECONDS and
        ATTACHMENT_PDF_PAGES (core.chat.attachments)."""
        return Limits(self.attachment_max_bytes, self.attachments_per_message,
                      self.attachment_parse_seconds, self.attachment_pdf_pages)

    @property
    def discord_file_origins(self) -> Origins:
        """Where Discord attachments may be downloaded from (DISCORD_CDN_HOSTS)."""
        return Origins.of(self.discord_cdn_hosts)

    @property
    def bridge_urls(self) -> tuple[str, ...]:
        """Every Bridge the runtime places runs on: HERMES_BRIDGE_URL's comma-separated list,
        else the one `serve` starts. InvalidInput for an entry that is not an http(s) URL."""
        return _bridge_urls(self.bridge_url)

    @property
    def spend_limits(self) -> dict[LimitKey, float]:
        """The LIMIT_* settings by limit (0: none), what SpendLimits takes as its defaults."""
        return {key: float(getattr(self, setting_name(key).lower())) for key in KEYS}

    @property
    def usage_shown(self) -> UsageShown:
        """SHOW_USAGE: what an answer's footer says of its model calls."""
        return UsageShown(self.show_usage)

    @property
    def policy(self) -> Policy:
        """Who may act on a turn and who may talk to the bot (core.chat.policy)."""
        return Policy.of(self.conversation_actions, self.chat_admins, self.allowed_users,
                         self.discord_allowed_roles)

    @property
    def channel_defaults(self) -> ChannelDefaults:
        """What a channel or workspace without its own settings uses (core.chat.channel_settings)."""
        return ChannelDefaults(self.thread_context_messages, self.busy_mode,
                               self.conversation_actions, self.allowed_users,
                               self.discord_allowed_roles, self.bridge_toolsets)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Settings:
        """Build settings from environment-like keys (upper-case field names); empty means unset."""
        values: dict[str, object] = {}
        for field in fields(cls):
            raw = env.get(field.name.upper(), "").strip()
            if raw:
                values[field.name] = _convert(field.name, field.type, raw)
        settings = cls(**values)  # type: ignore[arg-type]
        _bridge_urls(settings.bridge_url)  # a bad list is refused at start, not at a first run
        _cdn_hosts(settings.discord_cdn_hosts)
        check_url(settings.database_url)
        if settings.public_url:
            _public_url(settings.public_url)
        return settings


def _bridge_urls(raw: str) -> tuple[str, ...]:
    urls = tuple(u.strip().rstrip("/") for u in raw.split(",") if u.strip())
    for url in urls:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise InvalidInput(f"HERMES_BRIDGE_URL must list http(s) URLs, got {redacted_url(url)!r}")
    if not urls or len({redacted_url(u) for u in urls}) != len(urls):
        raise InvalidInput("HERMES_BRIDGE_URL must list each Bridge once")
    return urls


def _cdn_hosts(entries: tuple[str, ...]) -> None:
    if not entries:
        raise InvalidInput("DISCORD_CDN_HOSTS must list at least one host")
    try:
        Origins.of(entries)
    except ValueError as error:
        raise InvalidInput(f"DISCORD_CDN_HOSTS: {error}") from None


def _public_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query:
        raise InvalidInput(f"PUBLIC_URL must be the http(s) address that reaches ADMIN_PORT "
                           f"from the internet, e.g. https://bot.example.com; got {url!r}")


def _url_password(url: str) -> tuple[str, ...]:
    try:
        password = urlsplit(url).password
    except ValueError:  # a malformed URL: the database layer says so, with no secret in it
        return ()
    return (password, unquote(password)) if password else ()


_AT_LEAST_ONE = frozenset({"run_lease_seconds", "bridge_pool_size", "clarify_fallback_hours",
                           "platform_down_seconds", "bridge_run_buffer_bytes",
                           "intake_retry_seconds",
                           "attachment_max_bytes", "attachment_parse_seconds",
                           "attachment_pdf_pages",
                           "run_buffer_bytes"})


def _convert(name: str, kind: object, raw: str) -> object:
    if kind == "int":
        try:
            value = int(raw)
        except ValueError:
            raise InvalidInput(f"{name.upper()} must be an integer, got {raw!r}") from None
        if name in _AT_LEAST_ONE and value < 1:
            raise InvalidInput(f"{name.upper()} must be at least 1, got {value}")
        if name.startswith("limit_") and value < 0:
            raise InvalidInput(f"{name.upper()} must be 0 (none) or more, got {value}")
        if name == "discord_shard_count" and value < 0:
            raise InvalidInput(f"DISCORD_SHARD_COUNT must be 0 (Discord's recommendation) or "
                               f"more, got {value}")
        if name == "history_attachment_bytes" and not 0 <= value <= MAX_HISTORY_ATTACHMENT_BYTES:
            raise InvalidInput(f"HISTORY_ATTACHMENT_BYTES must be between 0 (earlier files are only "
                               f"named) and {MAX_HISTORY_ATTACHMENT_BYTES} (the Bridge takes at most "
                               f"512 MiB a request), got {value}")
        if name == "thread_context_messages" and not 0 <= value <= MAX_MESSAGES:
            raise InvalidInput(f"{name.upper()} must be between 0 (off) and {MAX_MESSAGES}, got {value}")
        return value
    if kind == "float":
        try:
            amount = float(raw)
        except ValueError:
            raise InvalidInput(f"{name.upper()} must be a number, got {raw!r}") from None
        if not math.isfinite(amount) or amount < 0:
            raise InvalidInput(f"{name.upper()} must be 0 (none) or more, got {raw!r}")
        return amount
    if kind == "bool":
        if raw.lower() not in ("1", "true", "yes", "0", "false", "no"):
            raise InvalidInput(f"{name.upper()} must be true or false, got {raw!r}")
        return raw.lower() in ("1", "true", "yes")
    if kind == "tuple[str, ...]":
        return tuple(part.strip() for part in raw.split(",") if part.strip())
    if name == "conversation_actions":
        Policy.of(raw)  # InvalidInput naming the key and both values
        return raw.strip().lower()
    if name == "busy_mode":
        mode = raw.strip().lower()
        if mode not in BUSY_MODES:
            raise InvalidInput(f"BUSY_MODE must be one of {', '.join(BUSY_MODES)}, got {raw!r}")
        return mode
    if name == "show_usage":
        shown = raw.strip().lower()
        if shown not in tuple(UsageShown):
            raise InvalidInput(f"SHOW_USAGE must be off, tokens or cost, got {raw!r}")
        return UsageShown(shown)
    if name == "schedule_timezone":
        try:
            return zone(raw).key
        except InvalidInput as error:
            raise InvalidInput(f"SCHEDULE_TIMEZONE: {error.message}") from None
    if name == "log_format" and raw not in ("text", "json"):
        raise InvalidInput(f"LOG_FORMAT must be 'text' or 'json', got {raw!r}")
    return raw
