"""What users do, turned into gateway events: messages, edits, clicks, modals, commands."""

from __future__ import annotations

import mimetypes
from collections.abc import Mapping, Sequence
from typing import Any

from tests.fakes import discord_payloads as dp

from .core import FakeCore
from .records import InteractionRecord

Payload = dict[str, Any]


async def user_message(
    core: FakeCore,
    content: str,
    *,
    channel_id: str,
    author: Payload,
    files: Mapping[str, bytes] | None = None,
    reply_to: str | None = None,
    stated_sizes: Mapping[str, int] | None = None,
) -> Payload:
    """Store a message from `author` and dispatch MESSAGE_CREATE; `<@id>` in content mentions."""
    world = core.world
    channel = core.channel(channel_id)
    attachments = []
    for filename, data in (files or {}).items():
        attachment_id = world.ids.next()
        world.attachments[attachment_id] = data
        url = core.attachment_url(channel_id, attachment_id, filename)
        size = (stated_sizes or {}).get(filename, len(data))
        attachments.append(dp.make_attachment(attachment_id, filename, size, url,
                                              content_type=mimetypes.guess_type(filename)[0]))
    message = dp.make_message(
        id=world.ids.next(),
        channel_id=channel_id,
        author=author,
        content=content,
        mentions=world.mentions_in(content),
        attachments=attachments,
        reply_to=world.messages[reply_to] if reply_to else None,
        guild_id=channel.get("guild_id"),
    )
    message.pop("guild_id", None)
    world.store_message(message)
    await core.dispatch_message("MESSAGE_CREATE", message)
    return message


async def user_post(
    core: FakeCore, forum_id: str, name: str, content: str, *, author: Payload
) -> Payload:
    """`author` opens a post in a forum: THREAD_CREATE, then MESSAGE_CREATE of its starter
    message (the post's id, in the post). Returns the post (a thread payload)."""
    world = core.world
    forum = core.channel(forum_id)
    starter = dp.make_message(
        id="0", channel_id=forum_id, author=author, content=content,
        mentions=world.mentions_in(content), guild_id=forum.get("guild_id"),
    )
    starter.pop("guild_id", None)
    post = world.add_post(forum_id, name, author, starter)
    await core.gateway.dispatch("THREAD_CREATE", dict(post, newly_created=True))
    await core.dispatch_message("MESSAGE_CREATE", world.messages[post["id"]])
    return post


async def user_edit(core: FakeCore, message_id: str, content: str) -> Payload:
    """Change a stored message's content and dispatch MESSAGE_UPDATE (a user's edit)."""
    message = core.world.messages[message_id]
    message["content"] = content
    message["mentions"] = core.world.mentions_in(content)
    message["edited_timestamp"] = dp.iso_time()
    await core.dispatch_message("MESSAGE_UPDATE", message)
    return message


def context(core: FakeCore, channel_id: str, user: Payload) -> Payload:
    """The common interaction fields for `user` acting in `channel_id`."""
    channel = core.channel(channel_id)
    guild_id = channel.get("guild_id")
    common: Payload = {
        "application_id": core.world.application_id,
        "channel": channel,
        "user": user,
    }
    if guild_id is not None:
        member = dict(core.world.member(guild_id, user["id"]) or dp.make_member(user))
        member["permissions"] = str(dp.MEMBER_PERMISSIONS)
        common |= {"guild_id": guild_id, "member": member}
    return common


async def dispatch_interaction(core: FakeCore, payload: Payload) -> InteractionRecord:
    """Register an interaction (so its callback is accepted) and dispatch INTERACTION_CREATE."""
    record = core.register_interaction(payload)
    await core.gateway.dispatch("INTERACTION_CREATE", payload)
    return record


async def click(
    core: FakeCore,
    message_id: str,
    custom_id: str,
    *,
    user: Payload,
    component_type: int = dp.BUTTON,
    values: Sequence[str] | None = None,
) -> InteractionRecord:
    message = core.world.messages[message_id]
    payload = dp.make_component_interaction(
        custom_id=custom_id, message=core.world.for_gateway(message), component_type=component_type,
        values=values, id=core.world.ids.next(), **context(core, message["channel_id"], user),
    )
    return await dispatch_interaction(core, payload)


async def submit_modal(
    core: FakeCore, opened_by: str, values: Mapping[str, str], *, user: Payload
) -> InteractionRecord:
    """Submit the modal the bot opened in answer to interaction `opened_by`."""
    origin = core.interactions[opened_by]
    modal = origin.modal
    if modal is None:
        raise LookupError(f"interaction {opened_by} was not answered with a modal")
    extra: Payload = {}
    if "message" in origin.payload:
        source = core.world.messages[origin.payload["message"]["id"]]
        extra["message"] = core.world.for_gateway(source)
    payload = dp.make_modal_submit(
        custom_id=modal["custom_id"], components=dp.modal_submit_components(modal, values),
        id=core.world.ids.next(), **extra, **context(core, origin.payload["channel_id"], user),
    )
    return await dispatch_interaction(core, payload)


def _option_defs(command: Payload, path: Sequence[str]) -> list[Payload]:
    options = command.get("options") or []
    for part in path:
        found = next((o for o in options if o["name"] == part and o["type"] in (1, 2)), None)
        if found is None:
            raise LookupError(f"/{command['name']} has no subcommand {part!r}")
        options = found.get("options") or []
    return options


def _filled(
    core: FakeCore, defs: list[Payload], options: Mapping[str, Any], focused: str | None
) -> tuple[list[Payload], Payload]:
    by_name = {d["name"]: d for d in defs}
    filled, resolved = [], {}
    for name, value in options.items():
        if name not in by_name:
            raise LookupError(f"the command has no option {name!r}; it has {sorted(by_name)}")
        kind = by_name[name]["type"]
        if kind == 6 and str(value) in core.world.users:
            resolved.setdefault("users", {})[str(value)] = core.world.users[str(value)]
            value = str(value)
        filled.append(dp.command_option(name, value, kind, focused=name == focused))
    return filled, resolved


async def command(
    core: FakeCore,
    name: str,
    path: Sequence[str],
    options: Mapping[str, Any],
    *,
    user: Payload,
    channel_id: str,
    focused: str | None = None,
) -> InteractionRecord:
    """Invoke a synced slash command (or ask for autocomplete of option `focused`)."""
    guild_id = core.world.channels[channel_id].get("guild_id")
    registered = core.world.find_command(name, guild_id)
    if registered is None:
        raise LookupError(f"/{name} was never synced to the fake")
    filled, resolved = _filled(core, _option_defs(registered, path), options, focused)
    payload = dp.make_command_interaction(
        name=name,
        command_id=registered["id"],
        options=filled,
        path=path,
        autocomplete=focused is not None,
        command_guild_id=registered.get("guild_id"),
        resolved=resolved,
        id=core.world.ids.next(),
        **context(core, channel_id, user),
    )
    return await dispatch_interaction(core, payload)
