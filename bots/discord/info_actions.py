"""Read-only buttons: Show thinking (ephemeral, paginated) and a compaction's summary."""

from __future__ import annotations

import io
from typing import Any

import discord

from bots.discord import ids
from bots.discord.render.pages import summary_part, thinking_page, thinking_pages
from bots.discord.render.parts import Part
from bots.discord.views import view_of
from core import tree
from core.conversation import views
from core.runtime.pool import RunPool


class InfoActions:
    def __init__(self, pool: RunPool) -> None:
        self._pool = pool

    async def thinking(self, interaction: discord.Interaction, action: ids.ActionId) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        part = await _thinking(self._pool, action.number(), 0)
        await interaction.edit_original_response(**_edit_kwargs(part))

    async def page(self, interaction: discord.Interaction, action: ids.ActionId) -> None:
        await interaction.response.defer()
        part = await _thinking(self._pool, action.number(0), action.number(1))
        await interaction.edit_original_response(**_edit_kwargs(part))

    async def summary(self, interaction: discord.Interaction, action: ids.ActionId) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        message = await tree.get_message(action.number())
        await interaction.edit_original_response(**_edit_kwargs(summary_part(message.content)))


async def _thinking(pool: RunPool, message_id: int, page: int) -> Part:
    return thinking_page(thinking_pages(await views.thinking_of(pool, message_id)), page, message_id)


def _edit_kwargs(part: Part) -> dict[str, Any]:
    files = [discord.File(io.BytesIO(part.file.data), filename=part.file.filename)] if part.file else []
    return {"embed": part.embed, "view": view_of(part), "attachments": files}
