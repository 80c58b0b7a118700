"""Show thinking (the whole thinking of an answer, privately, in pages) and the summary
behind a compaction's divider: open to everyone in the conversation."""

from __future__ import annotations

import io
from typing import Any

import discord

from bots.discord import ids
from bots.discord.actions import ID, ActionItem, OnMessage
from bots.discord.render.pages import summary_part, thinking_page, thinking_pages
from bots.discord.delivery.components import view_of
from bots.discord.render.parts import Part
from bots.discord.services import DiscordServices
from core.conversation import views


class ShowThinking(OnMessage, template=ids.pattern(ids.Action.THINKING, message=ID)):
    """Show thinking: the whole thinking of an answer, privately, in pages."""

    async def run(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        await _show_thinking(interaction, services, self.number("message"), 0)


class ThinkingPage(OnMessage, template=ids.pattern(ids.Action.PAGE, message=ID, page=ID)):
    """◀ ▶ of Show thinking's pages."""

    async def run(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        await interaction.response.defer()
        await _show_thinking(interaction, services, self.number("message"), self.number("page"))


class ShowSummary(OnMessage, template=ids.pattern(ids.Action.SUMMARY, message=ID)):
    """The summary behind a compaction's divider, privately."""

    async def run(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        summary = await views.summary(self.number("message"))
        await interaction.edit_original_response(**_edit_kwargs(summary_part(summary)))


async def _show_thinking(interaction: discord.Interaction, services: DiscordServices,
                         message_id: int, page: int) -> None:
    pages = thinking_pages(await views.thinking_of(services.pool, message_id))
    part = thinking_page(pages, page, message_id)
    await interaction.edit_original_response(**_edit_kwargs(part))


def _edit_kwargs(part: Part) -> dict[str, Any]:
    files = [discord.File(io.BytesIO(part.file.data), filename=part.file.filename)] if part.file else []
    return {"embed": part.embed, "view": view_of(part), "attachments": files}


ITEMS: tuple[type[ActionItem], ...] = (ShowThinking, ThinkingPage, ShowSummary)
