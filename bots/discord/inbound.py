"""What the handlers read of Discord's messages and interactions, typed at the edge (pure).

discord.py parses each gateway payload into its objects, but leaves some as Discord sent
them: `Interaction.data` is the raw dict (discord/types/interactions.py), and a `Message`
built from a partial payload has no `author` attribute at all. The handlers read neither
directly: `user_post` turns a message into what a turn needs (None for a bot's or system
message, or one without its author), `component_data` and `modal_submission` read an
interaction's data, tolerating fields missing, null or of another type, and `command_data`
says whether a slash command's data has the shape discord.py's CommandTree indexes (it is
the tree's `interaction_check`, bots/discord/intake.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import discord

from bots.fields import Json, items, obj, snowflake, text

TURN_TYPES = (discord.MessageType.default, discord.MessageType.reply)


@dataclass(frozen=True, slots=True)
class UserPost:
    """A message a person wrote (new or edited)."""

    id: int
    author_id: int
    content: str
    mentions: frozenset[int]
    has_media: bool  # attachments, stickers, embeds or a poll: something besides its words


def user_post(message: discord.Message) -> UserPost | None:
    """The message as a turn reads it; None for a bot's, a system message, or a message
    discord.py built without its author (a partial update)."""
    author = getattr(message, "author", None)
    if author is None or getattr(author, "bot", True) or message.type not in TURN_TYPES:
        return None
    mentions = frozenset(user.id for user in getattr(message, "mentions", ()))
    media = (message.attachments, message.stickers, message.embeds, getattr(message, "poll", None))
    return UserPost(message.id, author.id, message.content or "", mentions, any(media))


@dataclass(frozen=True, slots=True)
class ComponentData:
    """A click on a button, or a choice in a select."""

    custom_id: str
    values: tuple[str, ...] = ()

    @property
    def value(self) -> str:
        return self.values[0] if self.values else ""


def component_data(data: object) -> ComponentData:
    """The custom id ("" when missing) and chosen values of an interaction's data."""
    data = obj(data)
    values = tuple(v for v in (text(v) for v in items(data.get("values"))) if v)
    return ComponentData(text(data.get("custom_id")) or "", values)


@dataclass(frozen=True, slots=True)
class ModalSubmission:
    custom_id: str
    values: dict[str, str]  # custom id -> what the user typed, of every input


def modal_submission(data: object) -> ModalSubmission:
    """A modal's inputs, laid out in action rows (type 1) or labels (type 18)."""
    data = obj(data)
    values: dict[str, str] = {}
    for top in items(data.get("components")):
        top = obj(top)
        inner = [top.get("component")] if "component" in top else list(items(top.get("components")))
        for component in map(obj, inner):
            if (custom_id := text(component.get("custom_id"))) is not None:
                values[custom_id] = text(component.get("value")) or ""
    return ModalSubmission(text(data.get("custom_id")) or "", values)


@dataclass(frozen=True, slots=True)
class CommandData:
    """A slash command (or its autocomplete): `/name *path` with its options' values."""

    name: str
    path: tuple[str, ...]
    options: dict[str, str | int | float | bool]


# The option types a value may have (discord/types/interactions.py): string, integer,
# boolean, user, channel, role, mentionable (snowflakes as strings), number, attachment.
_VALUE_TYPES: dict[int, tuple[type, ...]] = {3: (str,), 4: (int,), 5: (bool,), 6: (str,), 7: (str,),
                                             8: (str,), 9: (str,), 10: (int, float), 11: (str,)}
_GROUPS = (1, 2)  # a subcommand, a subcommand group


def command_data(data: object) -> CommandData | None:
    """The command in an application command's data; None for a shape it cannot be read from."""
    data = obj(data)
    name, options = text(data.get("name")), data.get("options", [])
    if name is None or not isinstance(data.get("resolved", {}), dict) or \
            ("guild_id" in data and snowflake(data["guild_id"]) is None):
        return None
    path: list[str] = []
    while isinstance(options, list) and options and obj(options[0]).get("type") in _GROUPS:
        group = obj(options[0])
        if text(group.get("name")) is None:
            return None
        path.append(group["name"])
        options = group.get("options", [])
    values = _values(options)
    return CommandData(name, tuple(path), values) if values is not None else None


def _values(options: object) -> dict[str, str | int | float | bool] | None:
    if not isinstance(options, list):
        return None
    values: dict[str, str | int | float | bool] = {}
    for option in options:
        if not _well_typed(obj(option)):
            return None
        values[option["name"]] = option["value"]
    return values


def _well_typed(option: Json) -> bool:
    kind, value = option.get("type"), option.get("value")
    allowed = _VALUE_TYPES.get(kind) if type(kind) is int else None
    if allowed is None or text(option.get("name")) is None:
        return False
    if isinstance(value, bool):  # a bool is an int to Python, not to Discord
        return kind == 5
    return isinstance(value, allowed)
