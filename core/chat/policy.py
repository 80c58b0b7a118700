"""Who may act in a conversation (docs/configuration.md: who may talk and act).

Writing in a thread is open to everyone who may talk to the bot at all: that is a
conversation. Acting on a turn (answering its clarify question, Stop, Regenerate, Retry,
◀ ▶) is for the person who started that turn and for the chat admins, unless
`CONVERSATION_ACTIONS=anyone`. Who may talk to the bot at all is `ALLOWED_USERS` (platform
user ids) and, on Discord, `DISCORD_ALLOWED_ROLES` (role ids); both empty means everyone.

The adapters ask here and only render the answer: a refused click is told privately (an
ephemeral) with `refusals.not_yours`, a refused person once per conversation with
`refusals.NOT_ALLOWED`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any
from enum import StrEnum
from typing import TYPE_CHECKING

from tortoise.exceptions import IntegrityError

from core.errors import AdminOnly, InvalidInput, NotYours
from core.store.db import first_value
from core.store.models import ChatMessage, ChatSession, ClarifyPause, Role, TalkRefusal

if TYPE_CHECKING:
    from core.chat.sessions import ThreadKey


class ActionMode(StrEnum):
    """`CONVERSATION_ACTIONS`: who may act on a turn."""

    ASKER = "asker"
    ANYONE = "anyone"


@dataclass(frozen=True, slots=True)
class Policy:
    """The settings of who may act and who may talk, read once at the composition root."""

    actions: ActionMode = ActionMode.ASKER
    admins: frozenset[str] = frozenset()
    allowed_users: frozenset[str] = frozenset()
    allowed_roles: frozenset[str] = frozenset()

    @classmethod
    def of(cls, actions: str = "asker", admins: Iterable[str] = (),
           allowed_users: Iterable[str] = (), allowed_roles: Iterable[str] = ()) -> Policy:
        """A policy from setting values; an unknown `actions` value is InvalidInput."""
        try:
            mode = ActionMode(actions.strip().lower())
        except ValueError:
            raise InvalidInput(
                f"CONVERSATION_ACTIONS must be 'asker' or 'anyone', got {actions!r}") from None
        return cls(mode, frozenset(admins), frozenset(allowed_users), frozenset(allowed_roles))

    approvals: str = "asker"  # who decides a tool approval: asker, admins (or deny: nobody)

    def in_channel(self, settings: Mapping[str, Any]) -> Policy:
        """This policy as a channel's settings change it (core.chat.channel_settings): who may
        act, who may talk (its lists replace the service's) and who decides approvals; the
        chat admins stay the service's."""
        changed: dict[str, Any] = {}
        if settings.get("actions"):
            changed["actions"] = ActionMode(settings["actions"])
        if settings.get("approvals"):
            changed["approvals"] = settings["approvals"]
        for key, name in (("allowed_users", "allowed_users"), ("allowed_roles", "allowed_roles")):
            if settings.get(key) is not None:
                changed[name] = frozenset(settings[key])
        return replace(self, **changed) if changed else self

    def is_admin(self, user: str) -> bool:
        return user in self.admins

    def may_act(self, user: str, asker: str | None) -> bool:
        """Whether `user` may act on a turn `asker` started. A turn without a known asker (one
        started from the admin API or the CLI) is open to the admins only under `asker`."""
        if self.actions is ActionMode.ANYONE or self.is_admin(user):
            return True
        return asker is not None and user == asker

    def may_talk(self, user: str, roles: Iterable[str] = ()) -> bool:
        """Whether `user` (holding the Discord `roles`, if any) may talk to the bot at all.
        With both lists set, either admits; an admin always may."""
        if not self.allowed_users and not self.allowed_roles:
            return True
        if self.is_admin(user) or user in self.allowed_users:
            return True
        return bool(self.allowed_roles.intersection(str(role) for role in roles))

    def check_act(self, user: str, asker: str | None) -> None:
        """NotYours (code `not_yours`) unless `user` may act on the turn `asker` started."""
        if not self.may_act(user, asker):
            raise NotYours(asker)


    def check_approve(self, user: str, asker: str | None, decision: str) -> None:
        """A tool approval is decided by the asker or a chat admin only, whatever
        CONVERSATION_ACTIONS says (NotYours); "always" allows the pattern in every
        conversation, so it is an admin's only (AdminOnly, code `admin_only`)."""
        if not self.is_admin(user) and (asker is None or user != asker
                                        or self.approvals != "asker"):
            raise NotYours(None if self.approvals != "asker" else asker)
        if decision == "always" and not self.is_admin(user):
            raise AdminOnly("only a chat admin may always allow a command")


async def asker_of_message(message_id: int) -> str | None:
    """Who started the turn a message belongs to: the author of the user message (itself, or
    the parent of an assistant message). None when nobody on a platform wrote it."""
    row = await ChatMessage.filter(id=message_id).values("role", "author", "parent_id")
    if not row:
        return None
    if row[0]["role"] == Role.USER:
        return row[0]["author"]
    parent = row[0]["parent_id"]
    if parent is None:
        return None
    return await first_value(ChatMessage.filter(id=parent).values_list("author", flat=True))


async def settings_of_message(message_id: int) -> dict[str, Any]:
    """The channel settings the conversation of a message keeps (core.chat.channel_settings)."""
    found = await first_value(ChatMessage.filter(id=message_id).values_list(
        "session__channel_settings", flat=True))
    return dict(found or {})


async def settings_of_session(session_id: int) -> dict[str, Any]:
    """The channel settings a conversation keeps."""
    found = await first_value(ChatSession.filter(id=session_id).values_list(
        "channel_settings", flat=True))
    return dict(found or {})


async def settings_of_run(run_id: str) -> dict[str, Any]:
    """The channel settings the conversation of a run keeps."""
    found = await first_value(ChatMessage.filter(run_id=run_id).values_list(
        "session__channel_settings", flat=True))
    return dict(found or {})


async def asker_of_run(run_id: str) -> str | None:
    """Who started the turn a run answers."""
    found = await first_value(ChatMessage.filter(run_id=run_id, role=Role.ASSISTANT).values_list("id", flat=True))
    return await asker_of_message(found) if found is not None else None


async def message_of_pause(pause_id: int) -> int | None:
    """The answer whose run asked a clarify question or a tool approval."""
    return await first_value(ClarifyPause.filter(id=pause_id).values_list("message_id", flat=True))


async def asker_of_pause(pause_id: int) -> str | None:
    """Who started the turn that asked a clarify question."""
    found = await first_value(ClarifyPause.filter(id=pause_id).values_list("message_id", flat=True))
    return await asker_of_message(found) if found is not None else None


async def first_refusal(key: ThreadKey, user: str) -> bool:
    """Whether `user` is refused for the first time in the conversation `key` (recorded now):
    a person who may not talk is told once per conversation, whichever replica hears them."""
    conversation = f"{key.platform}:{key.workspace}:{key.channel}:{key.thread}"
    try:
        await TalkRefusal.create(conversation=conversation, user=user)
    except IntegrityError:
        return False
    return True
