"""The gate every event passes: who may talk to the bot, and the slash commands' one boundary.

Who may talk is core's rule (`core.chat.policy.Policy.may_talk`: `ALLOWED_USERS`,
`DISCORD_ALLOWED_ROLES`, the chat admins). A message from somebody who may not runs nothing
(no thread, no session, no turn) and they are told privately, once per conversation. Discord
has no ephemeral message outside an interaction, so "privately" is a DM to them (discord.py's
`User.create_dm`); when their DMs are closed, a reply in the place that mentions them. Who was
told is kept in the database (`core.conversation.policy.first_refusal`), so neither a
restart nor another replica tells them twice.

The command tree checks a slash command before discord.py routes it: `interaction_check`
(its hook that runs first) lets on only data `inbound.command_data` can read (discord.py reads
a command's data with `[...]` and raises what is not an AppCommandError past its own handler)
and only people who may talk, who are told why in an ephemeral each time (an interaction must
be answered). `on_error` is the one error boundary of every command: core's refusals are told
as they are, what Discord sent but this version cannot run (a command or option synced by an
older version, a value of another type) in words, logged at info, instead of a traceback.
"""

from __future__ import annotations

import logging

import discord
from discord import app_commands

from bots.discord.boundary import log_failure, tell
from bots.discord.inbound import command_data
from bots.discord.delivery.live import Notices
from bots.discord.render.refusals import notice_part, refusal_text
from core.conversation.policy import first_refusal
from core.conversation.refusals import NOT_ALLOWED
from core.conversation.vocabulary import Policy, ThreadKey

log = logging.getLogger(__name__)
STALE = ("That command does not match this version of the bot (Discord may still show an "
         "older one): try again in a minute.")
STALE_ERRORS = (app_commands.CommandNotFound, app_commands.CommandSignatureMismatch,
                app_commands.TransformerError)


def role_ids(user: discord.abc.User) -> list[str]:
    """The roles of a guild member (none for a user in a DM)."""
    return [str(role.id) for role in getattr(user, "roles", ())]


class DiscordIntake:
    def __init__(self, policy: Policy, notices: Notices) -> None:
        self.policy = policy
        self._notices = notices

    def may_talk(self, user: discord.abc.User) -> bool:
        return self.policy.may_talk(str(user.id), role_ids(user))

    async def admits(self, message: discord.Message, key: ThreadKey, target: int) -> bool:
        """Whether the message's author may talk to the bot; if not, they are told privately
        (once per conversation `key`; `target` is where the conversation is written)."""
        author = message.author
        if self.may_talk(author):
            return True
        await self.refused(message, key, target)
        return False

    async def refused(self, message: discord.Message, key: ThreadKey, target: int) -> None:
        """The author may not talk here: told privately, once per conversation `key`."""
        log.info("discord: message %s of %s refused: not allowed to talk to the bot",
                 message.id, message.author.id)
        if await first_refusal(key, str(message.author.id)):
            await self._tell(message, target)

    async def _tell(self, message: discord.Message, target: int) -> None:
        try:
            dm = await message.author.create_dm()
        except discord.HTTPException as error:  # DMs closed: say it where they wrote
            log.info("discord: cannot DM %s (%s): telling them in the thread", message.author.id, error)
            part = notice_part(f"{message.author.mention} {NOT_ALLOWED}")
            reply_to = message.id if message.channel.id == target else None
            self._notices.post(target, part, key=("not-allowed", message.id), reply_to=reply_to)
            return
        self._notices.post(dm.id, notice_part(NOT_ALLOWED), key=("not-allowed", message.id))


class DiscordCommandTree(app_commands.CommandTree[discord.Client]):
    """`intake` is given once the adapter is built (the tree is made with the client)."""

    intake: DiscordIntake | None = None

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        if command_data(interaction.data) is None:
            log.debug("discord: ignored an application command interaction %s of no readable "
                      "shape", interaction.id)
            return False
        if self.intake is None or self.intake.may_talk(interaction.user):
            return True
        log.info("discord: command %s of %s refused: not allowed to talk to the bot",
                 interaction.id, interaction.user.id)
        if interaction.type is discord.InteractionType.application_command:
            await tell(interaction, NOT_ALLOWED)
        return False

    async def on_error(self, interaction: discord.Interaction,
                       error: app_commands.AppCommandError, /) -> None:
        if isinstance(error, STALE_ERRORS):
            log.info("discord: interaction %s: %s", interaction.id, error)
            text = STALE
        elif isinstance(error, app_commands.CommandInvokeError) and isinstance(error.original, Exception):
            command = interaction.command.qualified_name if interaction.command else "a command"
            log_failure(error.original, f"/{command}")
            text = refusal_text(error.original)
        else:
            await super().on_error(interaction, error)
            return
        if interaction.type is discord.InteractionType.application_command:
            await tell(interaction, text)
