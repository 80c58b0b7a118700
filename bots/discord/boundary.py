"""The one error boundary of every event and interaction: log, then tell the user why.

core's errors are refusals (logged at info, told as they are); anything else is a bug (logged
with its traceback, told as "something went wrong"). asyncio.CancelledError is not an
Exception, so it always goes through.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

import discord

from bots.discord.render.refusals import refusal_text
from core.conversation.refusals import log_refusal

log = logging.getLogger(__name__)


def log_failure(error: Exception, what: str) -> None:
    """As core logs every refusal (`log_refusal`)."""
    log_refusal(log, error, what)


async def tell(interaction: discord.Interaction, text: str) -> None:
    """Answer the interaction with `text`: privately, or in the "thinking…" message it deferred to."""
    response = interaction.response
    try:
        if not response.is_done():
            await response.send_message(text, ephemeral=True)
        elif response.type is discord.InteractionResponseType.deferred_channel_message:
            await interaction.edit_original_response(content=text)
        else:
            await interaction.followup.send(text, ephemeral=True)
    except discord.HTTPException as error:  # expired token, or Discord refused: nothing more to do
        log.warning("could not answer interaction %s: %s", interaction.id, error)


@contextlib.asynccontextmanager
async def interaction_boundary(interaction: discord.Interaction, what: str) -> AsyncIterator[None]:
    try:
        yield
    except Exception as error:
        log_failure(error, what)
        await tell(interaction, refusal_text(error))
