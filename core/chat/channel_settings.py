"""Channel settings (docs/channels.md): what an admin set for one channel, or for a whole
workspace or guild as the default of its channels, in place of the service's settings.

A channel's keys override its workspace's, which override the service's own (`ChannelDefaults`,
from the environment). The keys set when a conversation starts are kept on its session
(`chat_session.channel_settings`), so a later change does not reach it until an admin applies
it (`apply`): a thread keeps the settings it started with.

The values are checked here (pure, `checked`), except the model and the skill, which the
catalogue checks a layer up; the rows are one per channel (`channel_setting`), shared by
replicas.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from core.chat.thread_context import DEFAULT_MESSAGES, MAX_MESSAGES
from core.store.models import ChannelSetting, ChatSession, ConversationBinding, Platform, utc_now
from core.text.field_errors import InvalidField, check_text
from core.text.safe_text import clean_text

BUSY_MODES = ("refuse", "queue", "steer")  # a message while the thread's run works
ACTION_MODES = ("asker", "anyone")  # who may act on a turn (CONVERSATION_ACTIONS)
APPROVAL_MODES = ("asker", "admins", "deny")  # who decides a tool approval, or nobody
MAX_PROMPT = 8000  # characters of a channel's system prompt
MAX_NAMES = 200  # toolsets, users or roles in one list
TEXTS = ("system_prompt", "model", "skill")
LISTS = ("toolsets", "allowed_users", "allowed_roles")
CHOICES = {"busy_mode": BUSY_MODES, "actions": ACTION_MODES, "approvals": APPROVAL_MODES}
KEYS = (*TEXTS, *LISTS, "thread_context", *CHOICES)
NO_SKILL = "none"  # a channel whose conversations use no skill, whatever its workspace says


@dataclass(frozen=True, slots=True)
class ChannelDefaults:
    """The service's own settings where no channel or workspace set one (the environment)."""

    thread_context: int = DEFAULT_MESSAGES  # THREAD_CONTEXT_MESSAGES
    busy_mode: str = "refuse"  # BUSY_MODE
    actions: str = "asker"  # CONVERSATION_ACTIONS
    allowed_users: tuple[str, ...] = ()  # ALLOWED_USERS
    allowed_roles: tuple[str, ...] = ()  # DISCORD_ALLOWED_ROLES
    toolsets: tuple[str, ...] = ()  # BRIDGE_TOOLSETS (empty: the Bridge's own)

    def value(self, key: str) -> Any:
        """The service's value of a key (None: none, the agent's own)."""
        return {"thread_context": self.thread_context, "busy_mode": self.busy_mode,
                "actions": self.actions, "approvals": "asker",
                "allowed_users": list(self.allowed_users),
                "allowed_roles": list(self.allowed_roles),
                "toolsets": list(self.toolsets) or None}.get(key)


@dataclass(frozen=True, slots=True)
class Effective:
    """Every key's value in a place and where it comes from (`channel`, `workspace`,
    `service`): what `/hermes status`, the admin API and a new conversation read."""

    values: dict[str, Any]
    sources: dict[str, str] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return self.values.get(key)


def checked(changes: Mapping[str, Any]) -> dict[str, Any]:
    """The changes, each value checked and cleaned (None: the key is removed, back to the
    workspace's or the service's); InvalidField naming the first bad one."""
    out: dict[str, Any] = {}
    for key, value in changes.items():
        if key not in KEYS:
            raise InvalidField(key, f"is not a channel setting (one of {', '.join(KEYS)})")
        out[key] = None if value is None else _checked(key, value)
    return out


def _checked(key: str, value: Any) -> Any:
    if key in TEXTS:
        if not isinstance(value, str) or not value.strip():
            raise InvalidField(key, "must be a non-empty text (null: not set here)")
        limit = MAX_PROMPT if key == "system_prompt" else 255
        if len(value) > limit:
            raise InvalidField(key, f"must be at most {limit} characters")
        return check_text(key, clean_text(value.strip()))
    if key in LISTS:
        return _names(key, value)
    if key == "thread_context":
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_MESSAGES:
            raise InvalidField(key, f"must be a whole number from 0 (off) to {MAX_MESSAGES}")
        return value
    choices = CHOICES[key]
    if value not in choices:
        raise InvalidField(key, f"must be one of {', '.join(choices)}")
    return value


def _names(key: str, value: Any) -> list[str]:
    if not isinstance(value, list) or len(value) > MAX_NAMES:
        raise InvalidField(key, f"must be a list of at most {MAX_NAMES} names")
    names: list[str] = []
    for name in value:
        if not isinstance(name, str) or not name.strip() or len(name) > 64 or "\x00" in name:
            raise InvalidField(key, "each name must be a text of 1 to 64 characters")
        if name.strip() not in names:
            names.append(name.strip())
    return names


def merged(workspace: Mapping[str, Any] | None, channel: Mapping[str, Any] | None) -> dict[str, Any]:
    """The keys set for a channel: its own over its workspace's."""
    return {**(workspace or {}), **(channel or {})}


def effective(defaults: ChannelDefaults, workspace: Mapping[str, Any] | None,
              channel: Mapping[str, Any] | None) -> Effective:
    """Every key's value, with where it comes from."""
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for key in KEYS:
        for source, found in (("channel", channel), ("workspace", workspace)):
            if found and key in found:
                values[key], sources[key] = found[key], source
                break
        else:
            values[key], sources[key] = defaults.value(key), "service"
    return Effective(values, sources)


def of_session(session: ChatSession, defaults: ChannelDefaults) -> Effective:
    """The settings a conversation keeps (those it started with, or an admin applied)."""
    return effective(defaults, None, session.channel_settings)


# --- the rows ---------------------------------------------------------------------------------

async def rows(platform: Platform | str, workspace: str, channel: str
               ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The keys set for the workspace and for the channel (None: no row), in one query."""
    found = {r.channel: dict(r.settings or {}) for r in await ChannelSetting.filter(
        platform=platform, workspace=workspace, channel__in=list({channel, ""}))}
    return found.get(""), (found.get(channel) if channel else None)


async def stored(platform: Platform | str, workspace: str, channel: str) -> dict[str, Any]:
    """The keys set for a channel (its own over its workspace's): what a new conversation
    there keeps."""
    return merged(*await rows(platform, workspace, channel))


async def save(platform: Platform | str, workspace: str, channel: str,
               changes: Mapping[str, Any], by: str) -> dict[str, Any]:
    """Set (or, with None, remove) keys of a channel or, with `channel` empty, of the workspace;
    the keys set there now. Checked values only (`checked`)."""
    row = await ChannelSetting.get_or_none(platform=platform, workspace=workspace, channel=channel)
    current = dict(row.settings or {}) if row is not None else {}
    for key, value in changes.items():
        if value is None:
            current.pop(key, None)
        else:
            current[key] = value
    if row is None:
        row = await ChannelSetting.create(platform=platform, workspace=workspace, channel=channel,
                                          settings=current, updated_by=by)
    else:
        row.settings, row.updated_by, row.updated_at = current, by, utc_now()
        await row.save(update_fields=["settings", "updated_by", "updated_at"])
    return current


async def remove(platform: Platform | str, workspace: str, channel: str) -> bool:
    """Forget every key of a channel (or a workspace); whether there were any."""
    return bool(await ChannelSetting.filter(platform=platform, workspace=workspace,
                                            channel=channel).delete())


async def apply(platform: Platform | str, workspace: str, channel: str) -> int:
    """Give the conversations of a channel (every channel of the workspace, with `channel`
    empty) the settings set there now: their snapshot, and their model and skill where the
    settings name one. How many conversations changed."""
    bound = ConversationBinding.filter(platform=platform, workspace=workspace)
    if channel:
        bound = bound.filter(channel=channel)
    places = await bound.values_list("session_id", "channel")
    by_channel: dict[str, list[int]] = {}
    for session_id, where in places:
        by_channel.setdefault(where, []).append(session_id)
    for where, session_ids in by_channel.items():
        settings = await stored(platform, workspace, where)
        await ChatSession.filter(id__in=session_ids).update(
            channel_settings=settings or None, updated_at=utc_now(), **session_choices(settings))
    return sum(len(ids) for ids in by_channel.values())


def session_choices(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The model and skill columns a conversation takes from its settings (none set: none)."""
    choices: dict[str, Any] = {}
    if settings.get("model"):
        choices["model_id"] = settings["model"]
    if settings.get("skill"):
        choices["skill_folder"] = None if settings["skill"] == NO_SKILL else settings["skill"]
    return choices
