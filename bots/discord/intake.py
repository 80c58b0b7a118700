"""The command tree: a slash command is checked before discord.py routes it.

discord.py's CommandTree reads a command's data with `[...]` (its name, its options) and
raises what is not an AppCommandError past its own handler, as a task nobody awaits. So the
tree's `interaction_check` (its hook that runs first) lets only data `inbound.command_data`
can read go on; and `on_error` answers what Discord sent but this version cannot run (a
command or option synced by an older version, a value of another type) in words, logged at
info, instead of discord.py's traceback.
"""

from __future__ import annotations

import logging

import discord
from discord import app_commands

from bots.discord.boundary import tell
from bots.discord.inbound import command_data

log = logging.getLogger(__name__)
STALE = ("That command does not match this version of the bot (Discord may still show an "
         "older one): try again in a minute.")
STALE_ERRORS = (app_commands.CommandNotFound, app_commands.CommandSignatureMismatch,
                app_commands.TransformerError)


class CheckedCommandTree(app_commands.CommandTree[discord.Client]):
    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        if command_data(interaction.data) is None:
            log.debug("discord: ignored an application command interaction %s of no readable "
                      "shape", interaction.id)
            return False
        return True

    async def on_error(self, interaction: discord.Interaction,
                       error: app_commands.AppCommandError, /) -> None:
        if not isinstance(error, STALE_ERRORS):
            await super().on_error(interaction, error)
            return
        log.info("discord: interaction %s: %s", interaction.id, error)
        if interaction.type is discord.InteractionType.application_command:
            await tell(interaction, STALE)
