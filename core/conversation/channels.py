"""Channel settings as admins set and read them (docs/channels.md): `/hermes channel …` on
Slack and Discord, and the admin API's `/api/channels/{platform}/{workspace}/{channel}`.

A place is a channel, or (channel `*` in the API, `workspace` in the command) a whole workspace
or guild as the default of its channels. Every value is checked before anything is written
(the model and skill against the catalogue, toolsets against BRIDGE_TOOLSETS when the service
knows them); the usage limits of a place are the spend limits of issue 30 (`spend_limit`,
core.conversation.spending), not a second copy. A conversation keeps the settings it started
with until an admin applies the new ones (`apply`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.agent.catalogue import Catalogue
from core.chat import channel_settings
from core.chat.sessions import ThreadKey
from core.chat.channel_settings import KEYS, NO_SKILL, ChannelDefaults, Effective
from core.conversation.session_commands import check_choices
from core.conversation.spending import LimitView, remove_limit, set_limit
from core.errors import ChannelAdminOnly, InvalidInput, NotFound
from core.store.models import ChannelSetting, ChatSession, LimitPeriod, LimitScope, LimitUnit, Platform
from core.text.field_errors import InvalidField
from core.usage import limits as spend_limits

WORKSPACE = "*"  # the API's name of a whole workspace's (a guild's) settings
LIMITS = tuple(f"{p}_{u}" for p in LimitPeriod for u in LimitUnit)  # day_tokens, day_cost, …


@dataclass(frozen=True, slots=True)
class Place:
    """A channel (`channel` empty: a whole workspace or guild)."""

    platform: Platform
    workspace: str
    channel: str = ""

    @classmethod
    def of(cls, platform: str, workspace: str, channel: str) -> Place:
        """The place an API path names; NotFound for a platform the service has not, and
        InvalidField for an id that cannot be one."""
        if platform not in tuple(Platform):
            raise NotFound(f"no platform {platform!r} (one of {', '.join(Platform)})")
        for name, value in (("workspace", workspace), ("channel", channel)):
            if not value or len(value) > 64 or not value.isprintable() or value.strip() != value:
                raise InvalidField(name, "must be a platform id of 1 to 64 characters")
        return cls(Platform(platform), workspace, "" if channel == WORKSPACE else channel)

    @classmethod
    def of_key(cls, key: ThreadKey) -> Place:
        """The channel of a conversation's thread."""
        return cls(Platform(key.platform), key.workspace, key.channel)

    @property
    def scope(self) -> LimitScope:
        return LimitScope.CHANNEL if self.channel else LimitScope.WORKSPACE

    @property
    def subject(self) -> str:
        return self.channel or self.workspace


@dataclass(frozen=True, slots=True)
class ChannelView:
    """A place's settings: the keys set there (`own`), every key's value and source for a new
    conversation there (`effective`), its spend limits (`limits`, amount None: none)."""

    place: Place
    own: dict[str, Any]
    effective: Effective
    limits: dict[str, float | None]
    updated_by: str | None = None
    updated_at: datetime | None = None
    applied: int | None = None  # conversations given these settings now (apply)


async def read(defaults: ChannelDefaults, place: Place) -> ChannelView:
    """What a place has set, and what a conversation started there now gets."""
    workspace, channel = await channel_settings.rows(place.platform, place.workspace,
                                                     place.channel or "")
    own = (channel if place.channel else workspace) or {}
    effective = channel_settings.effective(defaults, workspace if place.channel else None, own)
    row = await ChannelSetting.get_or_none(platform=place.platform, workspace=place.workspace,
                                           channel=place.channel)
    return ChannelView(place, dict(own), effective, await _limits(place),
                       row.updated_by if row else None, row.updated_at if row else None)


async def change(defaults: ChannelDefaults, catalogue: Catalogue, place: Place,
                 changes: Mapping[str, Any], by: str, apply: bool = False) -> ChannelView:
    """Set (None: remove) keys and spend limits of a place, every value checked first; with
    `apply`, the conversations already there take the new settings too."""
    limits = {k: v for k, v in changes.items() if k in LIMITS}
    checked = channel_settings.checked({k: v for k, v in changes.items() if k not in LIMITS})
    _check_choices(catalogue, defaults, checked)
    amounts = {key: _amount(key, value) for key, value in limits.items()}
    await channel_settings.save(place.platform, place.workspace, place.channel, checked, by)
    for key, amount in amounts.items():
        await _set_limit(place, key, amount)
    view = await read(defaults, place)
    return await _applied(view) if apply else view


async def forget(defaults: ChannelDefaults, place: Place, apply: bool = False) -> ChannelView:
    """Remove every setting and spend limit of a place (back to its workspace's or the
    service's); NotFound when it had none."""
    removed = await channel_settings.remove(place.platform, place.workspace, place.channel)
    limits = 0
    for key in LIMITS:
        period, unit = key.split("_")
        try:
            await remove_limit(place.scope, place.subject, period, unit)
            limits += 1
        except NotFound:
            pass
    if not removed and not limits:
        raise NotFound(f"no settings were set for {_name(place)}")
    view = await read(defaults, place)
    return await _applied(view) if apply else view


async def apply(defaults: ChannelDefaults, place: Place) -> ChannelView:
    """Give the conversations already in a place the settings set there now."""
    return await _applied(await read(defaults, place))


def of_session(defaults: ChannelDefaults, session: ChatSession) -> Effective:
    """The settings a conversation keeps (`/hermes status`, the session detail)."""
    return channel_settings.of_session(session, defaults)


def check_admin(policy_admins: frozenset[str], user: str) -> None:
    """ChannelAdminOnly unless `user` is one of CHAT_ADMINS: only they change a channel's settings."""
    if user not in policy_admins:
        raise ChannelAdminOnly("only a chat admin (CHAT_ADMINS) may change a channel's settings")


async def _applied(view: ChannelView) -> ChannelView:
    place = view.place
    count = await channel_settings.apply(place.platform, place.workspace, place.channel)
    return ChannelView(view.place, view.own, view.effective, view.limits, view.updated_by,
                       view.updated_at, count)


def _check_choices(catalogue: Catalogue, defaults: ChannelDefaults,
                   checked: Mapping[str, Any]) -> None:
    skill = checked.get("skill")
    check_choices(catalogue, checked.get("model"), None if skill == NO_SKILL else skill)
    toolsets = checked.get("toolsets")
    if toolsets and defaults.toolsets:
        unknown = [name for name in toolsets if name not in defaults.toolsets]
        if unknown:
            raise InvalidField("toolsets", f"{', '.join(unknown)} not enabled on the agent "
                               f"service (BRIDGE_TOOLSETS: {', '.join(defaults.toolsets)})")


def _amount(key: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or value < 0:
        raise InvalidField(key, "must be 0 or more (null: no limit of this place's own)")
    return float(value)


async def _set_limit(place: Place, key: str, amount: float | None) -> LimitView | None:
    period, unit = key.split("_")
    if amount is None:
        try:
            await remove_limit(place.scope, place.subject, period, unit)
        except NotFound:
            pass
        return None
    return await set_limit(place.scope, place.subject, period, unit, amount)


async def _limits(place: Place) -> dict[str, float | None]:
    """The spend limits an operator set for the place (its channel or workspace id)."""
    rows = [r for r in await spend_limits.overrides()
            if r.scope == place.scope and r.subject == place.subject]
    return {f"{r.period}_{r.unit}": r.amount for r in rows}


def _name(place: Place) -> str:
    return f"channel {place.channel}" if place.channel else f"workspace {place.workspace}"


# --- `/hermes channel …`, the words both platforms take ------------------------------------

ACTIONS = ("show", "set", "unset", "apply", "clear")
CHANNEL_USAGE = ("`/hermes channel [workspace] [show | set <key> <value> | unset <key> | apply | "
                 "clear]`; keys: " + ", ".join(f"`{k}`" for k in (*KEYS, *LIMITS))
                 + "; a list is written with commas (`-`: an empty list)")
SHOWN_CHARS = 200  # of a system prompt in `show`


@dataclass(frozen=True, slots=True)
class ChannelCommand:
    """`/hermes channel …` read: what to do, to the channel or (`workspace`) its workspace."""

    action: str = "show"
    workspace: bool = False
    key: str | None = None
    value: str | None = None


@dataclass(frozen=True, slots=True)
class ChannelReply:
    """What the admin is told (privately), and what the channel is told (a change: None for
    a look)."""

    private: str
    public: str | None = None


def parse_command(argument: str | None) -> ChannelCommand:
    """The words after `channel`; InvalidInput saying the usage when they make no command."""
    words = (argument or "").split(maxsplit=1)
    workspace = bool(words) and words[0].lower() == "workspace"
    rest = (words[1] if len(words) > 1 else "") if workspace else (argument or "")
    parts = rest.split(maxsplit=2)
    action = parts[0].lower() if parts else "show"
    if action not in ACTIONS:
        raise InvalidInput(f"I don't know `{action}` here. {CHANNEL_USAGE}")
    key = parts[1] if len(parts) > 1 else None
    value = parts[2] if len(parts) > 2 else None
    if action in ("set", "unset") and key is None or action == "set" and value is None:
        raise InvalidInput(f"`{action}` needs a key{' and a value' if action == 'set' else ''}. "
                           f"{CHANNEL_USAGE}")
    if action not in ("set", "unset") and key is not None:
        raise InvalidInput(f"`{action}` takes nothing more. {CHANNEL_USAGE}")
    return ChannelCommand(action, workspace, key.lower() if key else None, value)


def value_of(key: str, text: str) -> Any:
    """A setting's value as a command writes it (InvalidField when it cannot be one)."""
    text = text.strip()
    if key in LIMITS or key == "thread_context":
        try:
            number = float(text) if key in LIMITS else int(text)
        except ValueError:
            raise InvalidField(key, "must be a number") from None
        return number
    if key in channel_settings.LISTS:
        return [] if text == "-" else [n for n in text.replace(",", " ").split() if n]
    return text.lower() if key in channel_settings.CHOICES else text


async def run_command(pool_defaults: ChannelDefaults, catalogue: Catalogue, admins: frozenset[str],
                      place: Place, user: str, command: ChannelCommand) -> ChannelReply:
    """`/hermes channel …` by `user` where `place` is: a look for anyone, a change for the
    chat admins only (AdminOnly)."""
    if command.workspace:
        place = Place(place.platform, place.workspace)
    if command.action == "show":
        return ChannelReply(show_words(await read(pool_defaults, place)))
    check_admin(admins, user)
    if command.action == "apply":
        view = await apply(pool_defaults, place)
        return _changed(place, user, f"gave the {view.applied} conversations here the settings set "
                                     "now", view)
    if command.action == "clear":
        view = await forget(pool_defaults, place)
        return _changed(place, user, "removed every setting", view)
    key = command.key or ""
    if key not in KEYS and key not in LIMITS:
        raise InvalidField(key, f"is not a channel setting. {CHANNEL_USAGE}")
    try:
        value = None if command.action == "unset" else value_of(key, command.value or "")
        view = await change(pool_defaults, catalogue, place, {key: value}, user)
    except InvalidField as error:  # a person names the key they wrote
        raise InvalidInput(f"`{error.field}` {error.message}") from None
    said = f"removed `{key}`" if value is None else f"set `{key}` to {_shown(value)}"
    return _changed(place, user, said, view)


def _changed(place: Place, user: str, what: str, view: ChannelView) -> ChannelReply:
    where = "this channel's" if place.channel else "this workspace's"
    public = (f"⚙️ <@{user}> changed {where} settings: {what}. New conversations here take them"
              + ("." if view.applied is not None else
                 "; `/hermes channel apply` gives them to those already here."))
    return ChannelReply(f"✅ Done. {show_words(view)}", public)


def show_words(view: ChannelView) -> str:
    """A place's settings, one key a line, with where each comes from."""
    where = "this channel" if view.place.channel else "this workspace"
    lines = [f"⚙️ Settings of {where} (what a conversation started here gets):"]
    for key, value in view.effective.values.items():
        source = view.effective.sources[key]
        lines.append(f"• `{key}`: {_shown(value)} ({source})")
    limits = ", ".join(f"`{k}` {v:g}" if v is not None else f"`{k}` none"
                       for k, v in view.limits.items())
    lines.append(f"• spend limits of its own: {limits or 'none'}")
    return "\n".join(lines)


def session_words(settings: Effective) -> str:
    """The settings a conversation keeps, those not the service's own (`/hermes status`)."""
    kept = [f"`{key}` {_shown(value)}" for key, value in settings.values.items()
            if settings.sources.get(key) != "service"]
    return ", ".join(kept) if kept else "the service's own"


def _shown(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, list):
        return f"`{', '.join(value)}`" if value else "none (empty)"
    text = str(value).replace("`", "'")
    if len(text) > SHOWN_CHARS:
        text = text[:SHOWN_CHARS] + "…"
    return f"`{text}`"


__all__ = ["KEYS", "LIMITS", "WORKSPACE", "ChannelCommand", "ChannelReply", "ChannelView",
           "Place", "apply", "change", "check_admin", "forget", "of_session", "parse_command",
           "read", "run_command", "session_words", "show_words"]
