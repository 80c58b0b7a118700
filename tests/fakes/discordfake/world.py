"""The fake's in-memory Discord: users, guilds, channels, threads, messages, commands.

Everything is stored as the JSON Discord would return (ids are strings), so reading
"the current content/embeds/components of message X" is reading a dict.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tests.fakes import discord_payloads as dp

Payload = dict[str, Any]
_MENTION = re.compile(r"<@!?(\d+)>")
THREAD_TYPES = (10, 11, 12)
FORUM = 15


class Snowflakes:
    """Increasing snowflakes for everything the fake creates."""

    def __init__(self) -> None:
        self._last = 0

    def next(self) -> str:
        value = ((int(time.time() * 1000) - dp.DISCORD_EPOCH_MS) << 22) | (1 << 17)
        self._last = max(value, self._last + 1)
        return str(self._last)

    def next_on_shard(self, shard: int, count: int) -> str:
        """The next snowflake whose timestamp puts a guild on `shard` of `count`."""
        stamp = int(self.next()) >> 22
        stamp += (shard - stamp) % count
        self._last = max(self._last, (stamp << 22) | (1 << 17))
        return str(self._last)


@dataclass
class CdnSend:
    """How one answer of the CDN went: the bytes written to the socket, and whether the whole
    body was (False while sending, and once the client went away before the end)."""

    sent: int = 0
    whole: bool = False
    over: bool = False


@dataclass
class GuildState:
    meta: Payload
    roles: list[Payload]
    members: dict[str, Payload] = field(default_factory=dict)


# Discord checks an enforced nonce "for uniqueness in the past few minutes" (Create Message,
# `enforce_nonce`): the fake holds it for five minutes of its clock.
NONCE_SECONDS = 300.0


class World:
    """One bot (with its application) in one or more guilds, plus human users."""

    def __init__(self, bot_name: str = "hermes") -> None:
        self.ids = Snowflakes()
        self.users: dict[str, Payload] = {}
        self.guilds: dict[str, GuildState] = {}
        self.channels: dict[str, Payload] = {}
        self.messages: dict[str, Payload] = {}
        self.channel_messages: dict[str, list[str]] = {}
        self.attachments: dict[str, bytes] = {}
        self.cdn_sends: dict[str, CdnSend] = {}  # attachment id -> its latest download
        self.cdn_redirects: dict[str, str] = {}  # file name -> where the CDN redirects it
        self.commands: dict[str | None, list[Payload]] = {}
        self.hidden: set[str] = set()  # channels the bot may not view (GET answers 403)
        self.nonces: dict[tuple[str, str], tuple[str, float]] = {}  # (channel, nonce): (message, at)
        self.bot = self.add_user(bot_name, bot=True)
        self.application_id = self.ids.next()
        self.human = self.add_user("alice")
        guild = self.add_guild("Hermes Test")
        self.guild_id = guild["id"]
        self.channel_id = self.add_text_channel("general", guild_id=self.guild_id)["id"]

    # -- building the world -------------------------------------------------------------

    def add_user(self, username: str, *, bot: bool = False) -> Payload:
        user = dp.make_user(self.ids.next(), username, bot=bot, global_name=username.title())
        self.users[user["id"]] = user
        return user

    def add_guild(self, name: str, shard: tuple[int, int] | None = None) -> Payload:
        """A guild with the bot and alice in it; `shard` (id, count): one on that shard."""
        guild_id = self.ids.next_on_shard(*shard) if shard else self.ids.next()
        everyone = dp.make_role(guild_id, "@everyone", permissions=dp.MEMBER_PERMISSIONS)
        bot_role = dp.make_role(
            self.ids.next(), self.bot["username"], permissions=dp.BOT_PERMISSIONS, position=1
        )
        meta = {"id": guild_id, "name": name, "owner_id": self.human["id"]}
        state = self.guilds[guild_id] = GuildState(meta=meta, roles=[everyone, bot_role])
        state.members[self.bot["id"]] = dp.make_member(self.bot, roles=[bot_role["id"]])
        state.members[self.human["id"]] = dp.make_member(self.human)
        return meta

    def add_member(self, user: Payload, guild_id: str) -> Payload:
        member = self.guilds[guild_id].members[user["id"]] = dp.make_member(user)
        return member

    def add_text_channel(self, name: str, *, guild_id: str) -> Payload:
        position = sum(1 for c in self.channels.values() if c.get("guild_id") == guild_id)
        channel = dp.make_text_channel(self.ids.next(), guild_id, name, position=position)
        return self.add_channel(channel)

    def add_forum_channel(self, name: str, *, guild_id: str) -> Payload:
        position = sum(1 for c in self.channels.values() if c.get("guild_id") == guild_id)
        channel = dp.make_forum_channel(self.ids.next(), guild_id, name, position=position)
        return self.add_channel(channel)

    def add_post(self, forum_id: str, name: str, owner: Payload, starter: Payload) -> Payload:
        """A post of a forum: a public thread whose starter message (`starter`, a message
        payload without id or channel) is in the post itself and has the post's id."""
        forum = self.channels[forum_id]
        post = dp.make_thread(self.ids.next(), forum["guild_id"], forum_id, owner["id"], name)
        post["applied_tags"] = []
        self.add_channel(post)
        self.store_message(dict(starter, id=post["id"], channel_id=post["id"]))
        forum["last_message_id"] = post["id"]
        return post

    def add_channel(self, channel: Payload) -> Payload:
        self.channels[channel["id"]] = channel
        self.channel_messages.setdefault(channel["id"], [])
        return channel

    def dm_channel(self, user: Payload) -> Payload:
        """The DM channel between the bot and `user`, created on first use."""
        for channel in self.channels.values():
            if channel["type"] == 1 and channel["recipients"][0]["id"] == user["id"]:
                return channel
        return self.add_channel(dp.make_dm_channel(self.ids.next(), user))

    def guild_payload(self, guild_id: str) -> Payload:
        """The full guild as GUILD_CREATE carries it (channels, active threads, members)."""
        state = self.guilds[guild_id]
        in_guild = [c for c in self.channels.values() if c.get("guild_id") == guild_id]
        threads = [
            c for c in in_guild
            if c["type"] in THREAD_TYPES and not c["thread_metadata"]["archived"]
        ]
        return dp.make_guild(
            guild_id,
            state.meta["name"],
            owner_id=state.meta["owner_id"],
            roles=state.roles,
            channels=in_guild,
            members=list(state.members.values()),
            threads=threads,
        )

    # -- reading ----------------------------------------------------------------------

    def member(self, guild_id: str | None, user_id: str) -> Payload | None:
        if guild_id is None or guild_id not in self.guilds:
            return None
        return self.guilds[guild_id].members.get(user_id)

    def channel_messages_of(self, channel_id: str) -> list[Payload]:
        return [self.messages[m] for m in self.channel_messages.get(channel_id, [])]

    # -- messages -----------------------------------------------------------------------

    def mentions_in(self, content: str) -> list[Payload]:
        ids = dict.fromkeys(_MENTION.findall(content or ""))
        return [self.users[i] for i in ids if i in self.users]

    def nonced(self, channel_id: str, nonce: str, now: float) -> Payload | None:
        """The bot's message created in the channel with this nonce within NONCE_SECONDS (and
        not deleted since): what a create with `enforce_nonce` answers instead of a new one."""
        found = self.nonces.get((channel_id, nonce))
        if found is None or now - found[1] > NONCE_SECONDS:
            return None
        return self.messages.get(found[0])

    def remember_nonce(self, channel_id: str, nonce: str, message_id: str, now: float) -> None:
        self.nonces[(channel_id, nonce)] = (message_id, now)

    def store_message(self, message: Payload) -> Payload:
        channel = self.channels[message["channel_id"]]
        self.messages[message["id"]] = message
        self.channel_messages[channel["id"]].append(message["id"])
        channel["last_message_id"] = message["id"]
        if channel["type"] in THREAD_TYPES:
            channel["message_count"] += 1
            channel["total_message_sent"] += 1
        return message

    def reactions_of(self, message_id: str) -> list[str]:
        """The emoji the bot has on a message now, in the order they were added."""
        message = self.messages[message_id]
        return [r["emoji"]["name"] for r in message.get("reactions", []) if r.get("me")]

    def remove_message(self, message: Payload) -> None:
        del self.messages[message["id"]]
        self.channel_messages[message["channel_id"]].remove(message["id"])

    def for_gateway(self, message: Payload) -> Payload:
        """The MESSAGE_CREATE/UPDATE shape: adds guild_id, the author's member, mention members."""
        guild_id = self.channels[message["channel_id"]].get("guild_id")
        if guild_id is None:
            return dict(message)
        event = dict(message, guild_id=guild_id)
        member = self.member(guild_id, message["author"]["id"])
        if member is not None and not message.get("webhook_id"):
            event["member"] = dp.partial_member(member)
        event["mentions"] = [self._with_member(guild_id, u) for u in message.get("mentions", [])]
        return event

    def _with_member(self, guild_id: str, user: Payload) -> Payload:
        member = self.member(guild_id, user["id"])
        return dict(user, member=dp.partial_member(member)) if member else user

    # -- application commands ---------------------------------------------------------

    def overwrite_commands(self, guild_id: str | None, bodies: Iterable[Payload]) -> list[Payload]:
        """Bulk overwrite; a command keeps its id when its name survives, like Discord."""
        old = {(c["name"], c.get("type", 1)): c["id"] for c in self.commands.get(guild_id, [])}
        commands = []
        for body in bodies:
            kind = body.get("type", 1)
            command = {
                "id": old.get((body["name"], kind)) or self.ids.next(),
                "application_id": self.application_id,
                "version": self.ids.next(),
                "type": kind,
                "name": body["name"],
                "description": body.get("description", ""),
                "options": body.get("options", []),
                "default_member_permissions": body.get("default_member_permissions"),
                "dm_permission": body.get("dm_permission", True),
                "nsfw": body.get("nsfw", False),
                "contexts": body.get("contexts"),
                "integration_types": body.get("integration_types", [0]),
                "name_localizations": body.get("name_localizations"),
                "description_localizations": body.get("description_localizations"),
            }
            if guild_id is not None:
                command["guild_id"] = guild_id
            commands.append(command)
        self.commands[guild_id] = commands
        return commands

    def find_command(self, name: str, guild_id: str | None) -> Payload | None:
        for scope in (guild_id, None):
            for command in self.commands.get(scope, []):
                if command["name"] == name and command["type"] == 1:
                    return command
        return None
