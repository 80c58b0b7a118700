"""Builders for Discord API payloads, shaped like what discord.py 2.7 parses.

Ids are snowflakes rendered as strings, as Discord sends them; every builder takes the ids
it needs as arguments (int or str) and fills the remaining required fields with plausible
defaults. The fake Discord (`tests.fakes.discordfake`) builds its own world with these, and
tests use them to hand-craft gateway events:

    msg = make_message(channel_id=c, author=alice, content="hi <@42>", mentions=[bot], guild_id=g)
    click = make_component_interaction(custom_id="hermes:regen", message=msg, **ctx)
"""

from __future__ import annotations

import datetime
import secrets
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

Payload = dict[str, Any]
Snowflake = int | str

DISCORD_EPOCH_MS = 1_420_070_400_000

# Interaction types and component types (Discord API numbers).
PING, APPLICATION_COMMAND, MESSAGE_COMPONENT, AUTOCOMPLETE, MODAL_SUBMIT = 1, 2, 3, 4, 5
ACTION_ROW, BUTTON, STRING_SELECT, TEXT_INPUT, LABEL = 1, 2, 3, 4, 18
SUB_COMMAND, SUB_COMMAND_GROUP = 1, 2
EPHEMERAL = 1 << 6

# Permissions a bot typically gets: view, send, embed, attach, history, reactions, threads,
# app commands, manage messages/threads.
BOT_PERMISSIONS = sum(1 << b for b in (6, 10, 11, 13, 14, 15, 16, 31, 34, 35, 38))
MEMBER_PERMISSIONS = sum(1 << b for b in (6, 10, 11, 14, 15, 16, 31, 35, 38))


def snowflake(at: float | None = None) -> str:
    """A fresh snowflake for wall-clock time `at` (now by default); random low bits."""
    ms = int((time.time() if at is None else at) * 1000)
    return str(((ms - DISCORD_EPOCH_MS) << 22) | secrets.randbits(22))


def iso_time(at: float | None = None) -> str:
    """An ISO-8601 timestamp as Discord writes them."""
    moment = datetime.datetime.fromtimestamp(time.time() if at is None else at, datetime.UTC)
    return moment.isoformat()


def _sid(value: Snowflake | None) -> str | None:
    return None if value is None else str(value)


def make_user(
    id: Snowflake, username: str, *, bot: bool = False, global_name: str | None = None
) -> Payload:
    """A user object."""
    return {
        "id": str(id),
        "username": username,
        "discriminator": "0",
        "global_name": global_name,
        "avatar": None,
        "bot": bot,
        "public_flags": 0,
        "flags": 0,
    }


def make_member(
    user: Payload,
    *,
    roles: Iterable[Snowflake] = (),
    nick: str | None = None,
    permissions: int | None = None,
    joined_at: str | None = None,
) -> Payload:
    """A guild member with its user (interactions add `permissions`)."""
    member: Payload = {
        "user": user,
        "roles": [str(r) for r in roles],
        "nick": nick,
        "avatar": None,
        "joined_at": joined_at or iso_time(),
        "premium_since": None,
        "deaf": False,
        "mute": False,
        "pending": False,
        "flags": 0,
        "communication_disabled_until": None,
    }
    if permissions is not None:
        member["permissions"] = str(permissions)
    return member


def partial_member(member: Payload) -> Payload:
    """The member object Discord attaches to MESSAGE_CREATE (no `user` key)."""
    return {k: v for k, v in member.items() if k not in ("user", "permissions")}


def make_role(id: Snowflake, name: str, *, permissions: int = 0, position: int = 0) -> Payload:
    """A guild role."""
    return {
        "id": str(id),
        "name": name,
        "permissions": str(permissions),
        "position": position,
        "color": 0,
        "colors": {"primary_color": 0, "secondary_color": None, "tertiary_color": None},
        "hoist": False,
        "managed": False,
        "mentionable": False,
        "icon": None,
        "unicode_emoji": None,
        "flags": 0,
    }


def make_text_channel(
    id: Snowflake, guild_id: Snowflake, name: str, *, position: int = 0
) -> Payload:
    """A guild text channel (type 0)."""
    return {
        "id": str(id),
        "type": 0,
        "guild_id": str(guild_id),
        "name": name,
        "position": position,
        "parent_id": None,
        "topic": None,
        "nsfw": False,
        "rate_limit_per_user": 0,
        "last_message_id": None,
        "permission_overwrites": [],
        "default_auto_archive_duration": 1440,
        "flags": 0,
    }


def make_forum_channel(
    id: Snowflake, guild_id: Snowflake, name: str, *, position: int = 0
) -> Payload:
    """A guild forum channel (type 15): no messages of its own, only posts (threads)."""
    forum = make_text_channel(id, guild_id, name, position=position)
    return forum | {
        "type": 15,
        "available_tags": [],
        "default_reaction_emoji": None,
        "default_sort_order": None,
        "default_forum_layout": 0,
    }


def make_dm_channel(id: Snowflake, recipient: Payload) -> Payload:
    """A direct-message channel (type 1) with one recipient."""
    return {
        "id": str(id),
        "type": 1,
        "last_message_id": None,
        "recipients": [recipient],
        "flags": 0,
    }


def make_thread(
    id: Snowflake,
    guild_id: Snowflake,
    parent_id: Snowflake,
    owner_id: Snowflake,
    name: str,
    *,
    auto_archive_duration: int = 1440,
    private: bool = False,
) -> Payload:
    """A thread channel (type 11 public / 12 private) with its metadata."""
    now = iso_time()
    return {
        "id": str(id),
        "type": 12 if private else 11,
        "guild_id": str(guild_id),
        "parent_id": str(parent_id),
        "owner_id": str(owner_id),
        "name": name,
        "last_message_id": None,
        "rate_limit_per_user": 0,
        "message_count": 0,
        "member_count": 1,
        "total_message_sent": 0,
        "flags": 0,
        "thread_metadata": {
            "archived": False,
            "auto_archive_duration": auto_archive_duration,
            "archive_timestamp": now,
            "locked": False,
            "create_timestamp": now,
        },
    }


def make_guild(
    id: Snowflake,
    name: str,
    *,
    owner_id: Snowflake,
    roles: Sequence[Payload],
    channels: Sequence[Payload],
    members: Sequence[Payload],
    threads: Sequence[Payload] = (),
) -> Payload:
    """A full guild as sent in GUILD_CREATE."""
    return {
        "id": str(id),
        "name": name,
        "owner_id": str(owner_id),
        "icon": None,
        "unavailable": False,
        "large": False,
        "member_count": len(members),
        "joined_at": iso_time(),
        "roles": list(roles),
        "channels": [c for c in channels if c["type"] not in (10, 11, 12)],
        "threads": list(threads),
        "members": list(members),
        "presences": [],
        "voice_states": [],
        "emojis": [],
        "stickers": [],
        "features": [],
        "stage_instances": [],
        "guild_scheduled_events": [],
        "soundboard_sounds": [],
        "preferred_locale": "en-US",
        "premium_tier": 0,
        "verification_level": 0,
        "default_message_notifications": 0,
        "explicit_content_filter": 0,
        "mfa_level": 0,
        "nsfw_level": 0,
        "system_channel_id": None,
    }


def make_attachment(
    id: Snowflake, filename: str, size: int, url: str, *, content_type: str | None = None
) -> Payload:
    """An attachment object pointing at `url`."""
    return {
        "id": str(id),
        "filename": filename,
        "size": size,
        "url": url,
        "proxy_url": url,
        "content_type": content_type,
    }


def make_embed(
    *, title: str | None = None, description: str | None = None, **extra: Any
) -> Payload:
    """A rich embed."""
    embed: Payload = {"type": "rich", **extra}
    if title is not None:
        embed["title"] = title
    if description is not None:
        embed["description"] = description
    return embed


def make_message(
    *,
    channel_id: Snowflake,
    author: Payload,
    content: str = "",
    id: Snowflake | None = None,
    guild_id: Snowflake | None = None,
    member: Payload | None = None,
    mentions: Sequence[Payload] = (),
    embeds: Sequence[Payload] = (),
    components: Sequence[Payload] = (),
    attachments: Sequence[Payload] = (),
    reply_to: Payload | None = None,
    flags: int = 0,
    edited_timestamp: str | None = None,
    **extra: Any,
) -> Payload:
    """A message; with `guild_id`/`member` it is the MESSAGE_CREATE shape of a guild message.

    `mentions` are user payloads; `reply_to` (a message) makes it a reply (type 19).
    """
    message: Payload = {
        "id": str(id or snowflake()),
        "channel_id": str(channel_id),
        "type": 19 if reply_to else 0,
        "author": author,
        "content": content,
        "timestamp": iso_time(),
        "edited_timestamp": edited_timestamp,
        "tts": False,
        "mention_everyone": False,
        "mentions": list(mentions),
        "mention_roles": [],
        "attachments": list(attachments),
        "embeds": list(embeds),
        "components": list(components),
        "pinned": False,
        "flags": flags,
        **extra,
    }
    if reply_to is not None:
        message["message_reference"] = {
            "type": 0,
            "message_id": reply_to["id"],
            "channel_id": reply_to["channel_id"],
            "guild_id": _sid(guild_id),
        }
        # as Discord sends it: one level deep (the replied-to message's own reply is not
        # resolved; a client fetches it)
        message["referenced_message"] = {k: v for k, v in reply_to.items()
                                         if k != "referenced_message"}
    if guild_id is not None:
        message["guild_id"] = str(guild_id)
        if member is not None:
            message["member"] = partial_member(member)
    return message


def make_interaction(
    *,
    type: int,
    application_id: Snowflake,
    channel: Payload,
    user: Payload,
    data: Payload | None = None,
    guild_id: Snowflake | None = None,
    member: Payload | None = None,
    message: Payload | None = None,
    id: Snowflake | None = None,
    token: str | None = None,
    locale: str = "en-US",
) -> Payload:
    """An INTERACTION_CREATE payload; in a guild pass `guild_id` and `member` (else a DM)."""
    payload: Payload = {
        "id": str(id or snowflake()),
        "application_id": str(application_id),
        "type": type,
        "token": token or f"itoken-{secrets.token_hex(16)}",
        "version": 1,
        "channel_id": channel["id"],
        "channel": channel,
        "locale": locale,
        "app_permissions": str(BOT_PERMISSIONS),
        "entitlements": [],
        "attachment_size_limit": 10 * 1024 * 1024,
        "context": 0 if guild_id is not None else 1,
    }
    if data is not None:
        payload["data"] = data
    if message is not None:
        payload["message"] = message
    if guild_id is not None:
        payload["guild_id"] = str(guild_id)
        payload["guild"] = {"id": str(guild_id), "locale": "en-US", "features": []}
        payload["guild_locale"] = "en-US"
        payload["authorizing_integration_owners"] = {"0": str(guild_id)}
        payload["member"] = member or make_member(user, permissions=MEMBER_PERMISSIONS)
        payload["member"].setdefault("permissions", str(MEMBER_PERMISSIONS))
    else:
        payload["user"] = user
        payload["authorizing_integration_owners"] = {"1": user["id"]}
    return payload


def make_component_interaction(
    *,
    custom_id: str,
    message: Payload,
    component_type: int = BUTTON,
    values: Sequence[str] | None = None,
    **common: Any,
) -> Payload:
    """A component click (button by default; pass `values` and STRING_SELECT for a select)."""
    data: Payload = {"custom_id": custom_id, "component_type": component_type}
    if values is not None:
        data["values"] = list(values)
    return make_interaction(type=MESSAGE_COMPONENT, data=data, message=message, **common)


def make_modal_submit(*, custom_id: str, components: Sequence[Payload], **common: Any) -> Payload:
    """A modal submission; build `components` with `modal_submit_components`."""
    data = {"custom_id": custom_id, "components": list(components)}
    return make_interaction(type=MODAL_SUBMIT, data=data, **common)


def modal_submit_components(modal: Payload, values: Mapping[str, str]) -> list[Payload]:
    """What Discord submits for `modal` (a type 9 callback's data) filled with `values`.

    Mirrors the modal's layout: action rows stay rows, labels (type 18) stay labels.
    Inputs missing from `values` are submitted empty.
    """

    def submitted(component: Payload) -> Payload:
        return {
            "type": component["type"],
            "id": component.get("id", 0),
            "custom_id": component["custom_id"],
            "value": values.get(component["custom_id"], ""),
        }

    rows: list[Payload] = []
    for top in modal.get("components", []):
        if top["type"] == ACTION_ROW:
            inputs = [submitted(c) for c in top["components"]]
            rows.append({"type": ACTION_ROW, "components": inputs})
        elif top["type"] == LABEL:
            inner = submitted(top["component"])
            rows.append({"type": LABEL, "id": top.get("id", 0), "component": inner})
    return rows


def command_option(name: str, value: Any, type: int, *, focused: bool = False) -> Payload:
    """One filled-in option of a slash command (type 3 string, 4 integer, 5 boolean, ...)."""
    option: Payload = {"name": name, "type": type, "value": value}
    if focused:
        option["focused"] = True
    return option


def make_command_interaction(
    *,
    name: str,
    command_id: Snowflake,
    options: Sequence[Payload] = (),
    path: Sequence[str] = (),
    autocomplete: bool = False,
    command_guild_id: Snowflake | None = None,
    resolved: Payload | None = None,
    **common: Any,
) -> Payload:
    """A slash command (`/name *path options`), or an autocomplete request for it.

    `path` names the subcommand group/subcommand; `options` are `command_option(...)`s
    of the innermost command (mark one `focused` for autocomplete).
    """
    inner: list[Payload] = list(options)
    for depth, part in reversed(list(enumerate(path))):
        kind = SUB_COMMAND if depth == len(path) - 1 else SUB_COMMAND_GROUP
        inner = [{"name": part, "type": kind, "options": inner}]
    data: Payload = {"id": str(command_id), "name": name, "type": 1, "options": inner}
    if command_guild_id is not None:
        data["guild_id"] = str(command_guild_id)
    if resolved:
        data["resolved"] = resolved
    kind = AUTOCOMPLETE if autocomplete else APPLICATION_COMMAND
    return make_interaction(type=kind, data=data, **common)


def make_partial_message_update(
    *, id: Snowflake, channel_id: Snowflake, guild_id: Snowflake, embeds: Sequence[Payload]
) -> Payload:
    """The MESSAGE_UPDATE Discord sends when it adds a link preview to a message: only `id`,
    `channel_id`, `guild_id` and `embeds` (no type, author or content)."""
    return {"id": str(id), "channel_id": str(channel_id), "guild_id": str(guild_id),
            "embeds": list(embeds)}


def make_reaction_add(
    *,
    user_id: Snowflake,
    channel_id: Snowflake,
    message_id: Snowflake,
    guild_id: Snowflake | None = None,
    member: Payload | None = None,
    emoji: str = "\N{THUMBS UP SIGN}",
) -> Payload:
    """MESSAGE_REACTION_ADD: `user_id` reacted with a unicode `emoji` (guild ones carry the
    reacting `member`)."""
    reaction: Payload = {
        "user_id": str(user_id),
        "channel_id": str(channel_id),
        "message_id": str(message_id),
        "emoji": {"id": None, "name": emoji},
        "burst": False,
        "type": 0,
    }
    if guild_id is not None:
        reaction["guild_id"] = str(guild_id)
    if member is not None:
        reaction["member"] = member
    return reaction


def without(payload: Payload, *keys: str) -> Payload:
    """`payload` less some fields (a shape some Discord client or version sent)."""
    return {k: v for k, v in payload.items() if k not in keys}
