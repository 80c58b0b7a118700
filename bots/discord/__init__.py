"""The Discord adapter (discord.py): channels, threads and DMs <-> sessions, live embeds,
persistent buttons, the Custom answer modal and the /hermes commands (DESIGN §6)."""

from bots.discord.bot import DiscordBot

__all__ = ["DiscordBot"]
