"""The `/hermes` command group; each command runs inside the interaction error boundary."""

from __future__ import annotations

from typing import Literal

import discord
from discord import app_commands

from bots.discord.boundary import interaction_boundary
from bots.discord.commands.info import InfoCommands
from bots.discord.commands.session import SessionCommands
from bots.discord.commands.settings import SettingsCommands

Choice = app_commands.Choice[str]


def hermes_group(changes: SessionCommands, settings: SettingsCommands,
                 reads: InfoCommands) -> app_commands.Group:
    group = app_commands.Group(name="hermes", description="Talk to Hermes")

    @group.command(name="new", description="Start a new conversation here")
    async def new(interaction: discord.Interaction) -> None:
        async with interaction_boundary(interaction, "/hermes new"):
            await changes.new(interaction)

    @group.command(name="reset", description="Give this conversation a fresh agent (its messages stay)")
    async def reset(interaction: discord.Interaction) -> None:
        async with interaction_boundary(interaction, "/hermes reset"):
            await changes.reset(interaction)

    @group.command(name="model", description="Show or set the model of this conversation")
    @app_commands.describe(name="A model of the catalogue (leave empty to pick from a menu)")
    async def model(interaction: discord.Interaction, name: str | None = None) -> None:
        async with interaction_boundary(interaction, "/hermes model"):
            await settings.model(interaction, name)

    @model.autocomplete("name")
    async def model_names(interaction: discord.Interaction, current: str) -> list[Choice]:
        return settings.model_choices(current)

    @group.command(name="skill", description="Show or set the skill of this conversation")
    @app_commands.describe(name="A skill folder, or none (leave empty to pick from a menu)")
    async def skill(interaction: discord.Interaction, name: str | None = None) -> None:
        async with interaction_boundary(interaction, "/hermes skill"):
            await settings.skill(interaction, name)

    @skill.autocomplete("name")
    async def skill_names(interaction: discord.Interaction, current: str) -> list[Choice]:
        return settings.skill_choices(current)

    @group.command(name="export", description="Export this conversation as a file")
    @app_commands.describe(format="Markdown or JSON", branch="The active branch, or every version")
    async def export(interaction: discord.Interaction, format: Literal["md", "json"] = "md",
                     branch: Literal["active", "all"] = "active") -> None:
        async with interaction_boundary(interaction, "/hermes export"):
            await reads.export(interaction, format, branch)

    @group.command(name="memory", description="What the agent remembers in this conversation")
    async def memory(interaction: discord.Interaction) -> None:
        async with interaction_boundary(interaction, "/hermes memory"):
            await reads.memory(interaction)

    @group.command(name="status", description="This conversation's settings and the runs in flight")
    async def status(interaction: discord.Interaction) -> None:
        async with interaction_boundary(interaction, "/hermes status"):
            await reads.status(interaction)

    return group
