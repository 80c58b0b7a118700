"""Commands that read: export (attaches the file), memory, status."""

from __future__ import annotations

import io

import discord

from bots.discord.commands.where import CommandPlaces
from bots.discord.render.parts import clip
from bots.discord.render.status import status_embed
from core.bridge.port import Bridge
from core.conversation import commands
from core.runtime.pool import RunPool

FILE_LIMIT = 10 * 1024 * 1024  # what a bot may upload without a boosted server
NOTE_CHARS = 1000


class InfoCommands:
    def __init__(self, places: CommandPlaces, pool: RunPool, bridge: Bridge) -> None:
        self._places = places
        self._pool = pool
        self._bridge = bridge

    async def export(self, interaction: discord.Interaction, format: str, branch: str) -> None:
        session = await self._places.session(interaction)
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

    async def memory(self, interaction: discord.Interaction) -> None:
        session = await self._places.session(interaction)
        await interaction.response.defer(ephemeral=True, thinking=True)
        memory = await commands.memory(self._bridge, session.id)
        embed = discord.Embed(title="🧠 What the agent remembers in this conversation")
        for name, text in (("MEMORY.md", memory.memory), ("USER.md", memory.user)):
            embed.add_field(name=name, value=clip(text.strip() or "*(empty)*", NOTE_CHARS), inline=False)
        files = [discord.File(io.BytesIO(text.encode()), filename=name)
                 for name, text in (("MEMORY.md", memory.memory), ("USER.md", memory.user))
                 if len(text.strip()) > NOTE_CHARS]
        await interaction.edit_original_response(embed=embed, attachments=files)

    async def status(self, interaction: discord.Interaction) -> None:
        place = await self._places.place(interaction)
        session = await self._places.current(place)
        embed = status_embed(commands.status(self._pool, session))
        await interaction.response.send_message(embed=embed, ephemeral=True)
