"""`/hermes model` and `/hermes skill`: set by name (autocompleted from the catalogue), or
pick from a menu when no name is given; `skill none` goes back to no skill."""

from __future__ import annotations

import discord
from discord import app_commands

from bots.discord import ids
from bots.discord.commands.where import CommandPlaces
from bots.discord.inbound import component_data
from bots.discord.render.parts import Part, SelectSpec, clip
from bots.discord.views import view_of
from core.catalogue import Catalogue
from core.conversation import commands
from core.conversation.commands import NO_SKILL

CHOICES = 25  # Discord's limit of autocomplete choices and select options


class SettingsCommands:
    def __init__(self, places: CommandPlaces, catalogue: Catalogue) -> None:
        self._places = places
        self._catalogue = catalogue

    async def model(self, interaction: discord.Interaction, name: str | None) -> None:
        session = await self._places.session(interaction)
        if name is None:
            await self._menu(interaction, ids.Action.MODEL, session.model_id, self._models(), session.id)
            return
        await interaction.response.send_message(await self._set(ids.Action.MODEL, session.id, name))

    async def skill(self, interaction: discord.Interaction, name: str | None) -> None:
        session = await self._places.session(interaction)
        if name is None:
            skills = self._skills()
            await self._menu(interaction, ids.Action.SKILL, session.skill_folder, skills, session.id)
            return
        await interaction.response.send_message(await self._set(ids.Action.SKILL, session.id, name))

    async def picked(self, interaction: discord.Interaction, action: ids.ActionId) -> None:
        """A choice in the menu of `/hermes model` or `/hermes skill`."""
        value = component_data(interaction.data).value
        text = await self._set(action.action, action.number(), value)
        await interaction.response.edit_message(content=text, view=None)

    def model_choices(self, current: str) -> list[app_commands.Choice[str]]:
        return _matching(self._models(), current)

    def skill_choices(self, current: str) -> list[app_commands.Choice[str]]:
        return _matching(self._skills(), current)

    async def _set(self, action: ids.Action, session_id: int, value: str) -> str:
        if action is ids.Action.MODEL:
            entry = await commands.choose_model(self._catalogue, session_id, value)
            return f"🧠 This conversation now uses **{entry.name}** (`{entry.id}`)."
        skill = await commands.choose_skill(self._catalogue, session_id, value)
        if skill is None:
            return "🛠️ This conversation now uses no skill."
        return f"🛠️ This conversation now uses the skill **{skill.name}**."

    async def _menu(self, interaction: discord.Interaction, action: ids.Action, current: str | None,
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

    def _models(self) -> list[tuple[str, str]]:
        return [(clip(f"{m.name} ({m.id})", 100), m.id) for m in self._catalogue.models]

    def _skills(self) -> list[tuple[str, str]]:
        skills = [(clip(s.name, 100), s.folder) for s in self._catalogue.skills()]
        return [*skills, ("No skill", NO_SKILL)]


def _matching(options: list[tuple[str, str]], current: str) -> list[app_commands.Choice[str]]:
    found = [(label, value) for label, value in options if current.lower() in f"{label} {value}".lower()]
    return [app_commands.Choice(name=label, value=value) for label, value in found[:CHOICES]]
