"""Request and answer bodies of channel settings (camelCase JSON). A key left out of a PUT
stays as it is; null removes it (back to the workspace's, or the service's)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec

from admin.text import NON_BLANK, NO_NUL
from core.conversation.channels import ChannelView

Name = Annotated[str, msgspec.Meta(min_length=1, max_length=64, pattern=NON_BLANK)]
Names = Annotated[list[Name], msgspec.Meta(max_length=200)]
Amount = Annotated[float, msgspec.Meta(ge=0, le=1e15)]
Unset = msgspec.UnsetType
UNSET = msgspec.UNSET


class LimitsIn(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    """The place's own spend limits (those of `/api/limits`, scope channel or workspace):
    tokens (prompt and completion) or cost, per UTC day or month; null: none of its own."""

    day_tokens: Amount | None | Unset = UNSET
    day_cost: Amount | None | Unset = UNSET
    month_tokens: Amount | None | Unset = UNSET
    month_cost: Amount | None | Unset = UNSET


class ChannelIn(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    """What to change; `apply`: the conversations already there take the new settings too
    (else only those started from now on)."""

    system_prompt: Annotated[str, msgspec.Meta(min_length=1, max_length=8000,
                                               pattern=NON_BLANK)] | None | Unset = UNSET
    model: Annotated[str, msgspec.Meta(min_length=1, max_length=128,
                                       pattern=NO_NUL)] | None | Unset = UNSET
    skill: Annotated[str, msgspec.Meta(min_length=1, max_length=128, pattern=NO_NUL,
                                       description="a skill folder, or `none`")
                     ] | None | Unset = UNSET
    toolsets: Names | None | Unset = UNSET
    thread_context: Annotated[int, msgspec.Meta(ge=0, le=200)] | None | Unset = UNSET
    allowed_users: Names | None | Unset = UNSET
    allowed_roles: Names | None | Unset = UNSET
    actions: Literal["asker", "anyone"] | None | Unset = UNSET
    approvals: Literal["asker", "admins", "deny"] | None | Unset = UNSET
    busy_mode: Literal["refuse", "queue", "steer"] | None | Unset = UNSET
    limits: LimitsIn | Unset = UNSET
    apply: bool = False

    def changes(self) -> dict[str, Any]:
        """The keys given, in core's names (limits as day_tokens, …)."""
        out = {name: value for name in self.__struct_fields__
               if name not in ("limits", "apply") and (value := getattr(self, name)) is not UNSET}
        if not isinstance(self.limits, Unset):
            out.update({name: value for name in self.limits.__struct_fields__
                        if (value := getattr(self.limits, name)) is not UNSET})
        return out


class SettingOut(msgspec.Struct, frozen=True):
    """A key's value for a new conversation here, and where it comes from: `channel`,
    `workspace` or `service` (the environment; null: the agent's own)."""

    value: Any
    source: str


class ChannelOut(msgspec.Struct, frozen=True, rename="camel"):
    """A place's settings: `settings` the keys set here (snake_case keys as stored), `effective`
    every key, `limits` its own spend limits, `applied` how many conversations took them now."""

    platform: str
    workspace: str
    channel: str | None
    settings: dict[str, Any]
    effective: dict[str, SettingOut]
    limits: dict[str, float | None]
    updated_by: str | None
    updated_at: datetime | None
    applied: int | None = None


def channel_out(view: ChannelView) -> ChannelOut:
    place = view.place
    effective = {key: SettingOut(view.effective.values[key], view.effective.sources[key])
                 for key in view.effective.values}
    return ChannelOut(str(place.platform), place.workspace, place.channel or None, view.own,
                      effective, view.limits, view.updated_by, view.updated_at, view.applied)
