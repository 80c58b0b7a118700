"""`/hermes new|reset|model|skill|export|memory|status|usage`, on core's platform-neutral commands
(`core.conversation.commands`).

Each command finds its place and session, calls core and renders the result; what goes wrong
is answered once, in the command tree's `on_error` (bots/discord/intake.py). `/hermes model`
and `/hermes skill` set by name (autocompleted from the catalogue), or offer a menu when no
name is given: a choice in that menu is the `ModelSelect` / `SkillSelect` item.
"""

from __future__ import annotations

import io
from typing import Literal

import discord
from discord import app_commands

from bots.discord import ids
from bots.discord.actions import ID, ActionItem
from bots.discord.conversation import Place, allowed
from bots.discord.delivery.components import view_of
from bots.discord.errors import CannotAnswerHere
from bots.discord.inbound import component_data
from bots.discord.render.parts import Part, SelectSpec, clip
from bots.discord.render.status import status_embed, usage_embed
from bots.discord.render.titles import NEW_THREAD_NAME
from bots.discord.services import DiscordServices, services_of
from core.conversation import bindings, channels, commands
from core.conversation.commands import NO_SKILL
from core.conversation.refusals import NO_CONVERSATION, NOT_HERE
from core.conversation.vocabulary import Catalogue, ChatSession
from core.errors import InvalidInput, NotFound

POST_STARTER = "🆕 A new conversation with Hermes: every message in this post goes to the agent."
FILE_LIMIT = 10 * 1024 * 1024  # what a bot may upload without a boosted server
NOTE_CHARS = 1000
MESSAGE_CHARS = 2000  # Discord's limit of a message's content
CHOICES = 25  # Discord's limit of autocomplete choices and select options
Choice = app_commands.Choice[str]


# --- where a command is used ----------------------------------------------------------------


async def place_of(interaction: discord.Interaction, services: DiscordServices) -> Place:
    place = await services.sessions.place_of(interaction.channel, interaction.guild)
    if place is None or not allowed(place, services.allow_list):
        raise InvalidInput(NOT_HERE)
    return place


async def current(place: Place) -> ChatSession | None:
    """The conversation bound to a thread or DM, if any (a channel has none)."""
    if place.is_dm or place.thread is not None:
        return await bindings.bound_session(place.key())
    return None


async def session_of(interaction: discord.Interaction, services: DiscordServices) -> ChatSession:
    """The conversation of this thread or DM (a DM always has one)."""
    place = await place_of(interaction, services)
    if place.is_dm:
        dm, _ = await bindings.session_for_thread(place.key())
        return dm
    session = await current(place)
    if session is None:
        raise NotFound(NO_CONVERSATION)
    return session


def forum_of(channel: object) -> discord.ForumChannel | None:
    """The forum a command is used in: the forum channel itself, or the forum of a post."""
    if isinstance(channel, discord.Thread):
        channel = channel.parent
    return channel if isinstance(channel, discord.ForumChannel) else None


async def open_post(forum: discord.ForumChannel) -> discord.Thread:
    """A new post of the forum for a new conversation (a post needs a starter message)."""
    try:
        made = await forum.create_thread(name=NEW_THREAD_NAME, content=POST_STARTER)
    except discord.Forbidden as error:
        raise CannotAnswerHere(f"🔒 I can't create a post in {forum.mention}: {error.text}",
                               can_send=True) from error
    except discord.HTTPException as error:  # e.g. the forum requires a tag on every post
        raise CannotAnswerHere(f"I couldn't create a post in {forum.mention}: {error.text}",
                               can_send=True) from error
    return made.thread


# --- the commands -----------------------------------------------------------------------------


class HermesCommands(app_commands.Group, name="hermes", description="Talk to Hermes"):
    @app_commands.command(name="new", description="Start a new conversation here")
    async def new(self, interaction: discord.Interaction) -> None:
        """A fresh session for this thread or DM (keeping its model and skill); in a channel,
        in a new thread; in a forum or one of its posts, in a new post."""
        services = services_of(interaction)
        place = await place_of(interaction, services)
        old = await current(place)
        await interaction.response.defer(thinking=True)
        where = ""
        forum = forum_of(interaction.channel)
        if forum is not None:
            thread = await open_post(forum)
            place, where = Place(place.guild, forum.id, thread.id), f" in {thread.mention}"
        elif not place.is_dm and place.thread is None:
            channel = interaction.channel
            assert isinstance(channel, discord.TextChannel)
            thread = await channel.create_thread(
                name=NEW_THREAD_NAME, type=discord.ChannelType.public_thread)
            place, where = place.with_thread(thread.id), f" in {thread.mention}"
        session = await commands.new_conversation(place.key(), old)
        services.refs.bound(session.id, place.target)
        await interaction.edit_original_response(
            content=f"🆕 New conversation started{where}. Earlier messages are not part of it.")

    @app_commands.command(name="reset", description="Give this conversation a fresh agent (its messages stay)")
    async def reset(self, interaction: discord.Interaction) -> None:
        """A fresh agent (and memory notes) for this conversation; its messages stay."""
        services = services_of(interaction)
        session = await session_of(interaction, services)
        await interaction.response.defer(thinking=True)
        outcome = await commands.reset(services.bridge, session.id)
        caveat = commands.reset_caveat(outcome)
        await interaction.edit_original_response(
            content="♻️ Reset: the agent of this conversation starts afresh, with empty memory "
                    "notes. The messages here stay." + (f" {caveat}" if caveat else ""))

    @app_commands.command(name="model", description="Show or set the model of this conversation")
    @app_commands.describe(name="A model of the catalogue (leave empty to pick from a menu)")
    async def model(self, interaction: discord.Interaction, name: str | None = None) -> None:
        await _choose(interaction, ids.Action.MODEL, name)

    @model.autocomplete("name")
    async def model_names(self, interaction: discord.Interaction, current: str) -> list[Choice]:
        return _matching(_options(services_of(interaction).catalogue, ids.Action.MODEL), current)

    @app_commands.command(name="skill", description="Show or set the skill of this conversation")
    @app_commands.describe(name="A skill folder, or none (leave empty to pick from a menu)")
    async def skill(self, interaction: discord.Interaction, name: str | None = None) -> None:
        await _choose(interaction, ids.Action.SKILL, name)

    @skill.autocomplete("name")
    async def skill_names(self, interaction: discord.Interaction, current: str) -> list[Choice]:
        return _matching(_options(services_of(interaction).catalogue, ids.Action.SKILL), current)

    @app_commands.command(name="export", description="Export this conversation as a file")
    @app_commands.describe(format="Markdown or JSON", branch="The active branch, or every version")
    async def export(self, interaction: discord.Interaction, format: Literal["md", "json"] = "md",
                     branch: Literal["active", "all"] = "active") -> None:
        session = await session_of(interaction, services_of(interaction))
        await interaction.response.defer(thinking=True)
        export = await commands.export(session.id, format, branch)
        data = export.content
        if len(data) > FILE_LIMIT:
            await interaction.edit_original_response(
                content=f"📄 The export is {len(data) // 1_000_000} MB, over Discord's upload limit: "
                        "ask an operator to export it from the admin API.")
            return
        file = discord.File(io.BytesIO(data), filename=export.filename)
        await interaction.edit_original_response(
            content=f"📄 This conversation ({branch} branch, {format}):", attachments=[file])

    @app_commands.command(name="memory", description="What the agent remembers in this conversation")
    async def memory(self, interaction: discord.Interaction) -> None:
        services = services_of(interaction)
        session = await session_of(interaction, services)
        await interaction.response.defer(ephemeral=True, thinking=True)
        memory = await commands.memory(services.bridge, session.id)
        notes = (("MEMORY.md", memory.memory), ("USER.md", memory.user))
        embed = discord.Embed(title="🧠 What the agent remembers in this conversation")
        for name, text in notes:
            embed.add_field(name=name, value=clip(text.strip() or "*(empty)*", NOTE_CHARS), inline=False)
        files = [discord.File(io.BytesIO(text.encode()), filename=name)
                 for name, text in notes if len(text.strip()) > NOTE_CHARS]
        await interaction.edit_original_response(embed=embed, attachments=files)

    @app_commands.command(name="usage", description="What your messages have spent today and this month")
    async def usage(self, interaction: discord.Interaction) -> None:
        services = services_of(interaction)
        await place_of(interaction, services)  # where the bot answers at all
        embed = usage_embed(await commands.own_usage(services.pool, str(interaction.user.id)))
        await interaction.response.send_message(embed=embed, ephemeral=True)

    @app_commands.command(name="channel",
                          description="This channel's settings (chat admins change them)")
    @app_commands.describe(action="show, set, unset, apply (to the conversations already here) "
                                  "or clear", key="a setting (set, unset)",
                           value="its value (set): a list with commas, `-` an empty one",
                           scope="this channel, or the whole server as its channels' default")
    async def channel(self, interaction: discord.Interaction,
                      action: Literal["show", "set", "unset", "apply", "clear"] = "show",
                      key: str | None = None, value: str | None = None,
                      scope: Literal["channel", "workspace"] = "channel") -> None:
        """Shown privately; a change is confirmed in the channel (the thread it was given in)."""
        services = services_of(interaction)
        place = await place_of(interaction, services)
        command = channels.parse_command(" ".join(
            w for w in ("workspace" if scope == "workspace" else "", action, key or "",
                        value or "") if w))
        reply = await channels.run_command(
            services.pool.channel_defaults, services.catalogue, services.intake.policy.admins,
            channels.Place.of_key(place.key()), str(interaction.user.id), command)
        await interaction.response.send_message(clip(reply.private, MESSAGE_CHARS), ephemeral=True)
        if reply.public is not None:
            await interaction.followup.send(clip(reply.public, MESSAGE_CHARS))

    @channel.autocomplete("key")
    async def channel_keys(self, interaction: discord.Interaction, current: str) -> list[Choice]:
        keys = [(k, k) for k in (*channels.KEYS, *channels.LIMITS)]
        return _matching(keys, current)

    @app_commands.command(name="status", description="This conversation's settings and the runs in flight")
    async def status(self, interaction: discord.Interaction) -> None:
        services = services_of(interaction)
        session = await current(await place_of(interaction, services))
        embed = status_embed(commands.status(services.pool, session))
        await interaction.response.send_message(embed=embed, ephemeral=True)


# --- model and skill ------------------------------------------------------------------------


class SettingSelect(ActionItem, template=r"(?!)"):
    """A choice in the menu of `/hermes model` or `/hermes skill` (`session` group)."""

    action: ids.Action

    async def session_of(self) -> int | None:
        return self.number("session")

    async def run(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        value = component_data(interaction.data).value
        text = await _set(services.catalogue, self.action, self.number("session"), value)
        await interaction.response.edit_message(content=text, view=None)


class ModelSelect(SettingSelect, template=ids.pattern(ids.Action.MODEL, session=ID)):
    action = ids.Action.MODEL


class SkillSelect(SettingSelect, template=ids.pattern(ids.Action.SKILL, session=ID)):
    action = ids.Action.SKILL


SELECTS: tuple[type[ActionItem], ...] = (ModelSelect, SkillSelect)


async def _choose(interaction: discord.Interaction, action: ids.Action, name: str | None) -> None:
    """Set the model or skill by name; with no name, offer the menu."""
    services = services_of(interaction)
    session = await session_of(interaction, services)
    if name is None:
        current = session.model_id if action is ids.Action.MODEL else session.skill_folder
        await _menu(interaction, action, current, _options(services.catalogue, action), session.id)
        return
    await interaction.response.send_message(await _set(services.catalogue, action, session.id, name))


async def _set(catalogue: Catalogue, action: ids.Action, session_id: int, value: str) -> str:
    if action is ids.Action.MODEL:
        entry = await commands.choose_model(catalogue, session_id, value)
        return f"🧠 This conversation now uses **{entry.name}** (`{entry.id}`)."
    skill = await commands.choose_skill(catalogue, session_id, value)
    if skill is None:
        return "🛠️ This conversation now uses no skill."
    return f"🛠️ This conversation now uses the skill **{skill.name}**."


async def _menu(interaction: discord.Interaction, action: ids.Action, current: str | None,
                options: list[tuple[str, str]], session_id: int) -> None:
    what = "model" if action is ids.Action.MODEL else "skill"
    if not options:
        await interaction.response.send_message(f"No {what}s are configured.", ephemeral=True)
        return
    spec = SelectSpec(ids.encode(action, session_id), f"Choose a {what}",
                      tuple(options[:CHOICES]), current)
    text = f"The {what} of this conversation: **{current or 'the default'}**. Pick another:"
    view = view_of(Part(discord.Embed(), selects=(spec,)))
    await interaction.response.send_message(text, view=view, ephemeral=True)  # type: ignore[arg-type]


def _options(catalogue: Catalogue, action: ids.Action) -> list[tuple[str, str]]:
    """(label, value) of each model, or of each skill and "No skill"."""
    if action is ids.Action.MODEL:
        return [(clip(f"{m.name} ({m.id})", 100), m.id) for m in catalogue.models]
    skills = [(clip(s.name, 100), s.folder) for s in catalogue.skills()]
    return [*skills, ("No skill", NO_SKILL)]


def _matching(options: list[tuple[str, str]], current: str) -> list[Choice]:
    found = [(label, value) for label, value in options if current.lower() in f"{label} {value}".lower()]
    return [app_commands.Choice(name=label, value=value) for label, value in found[:CHOICES]]
