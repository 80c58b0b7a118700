"""The attachments of a Discord message, downloaded from Discord's CDN only
(DISCORD_CDN_HOSTS: `bots/downloads.py`), streamed, no more than the cap read of any file."""

from __future__ import annotations

import functools

import aiohttp
import discord

from bots.downloads import download
from core.config import DISCORD_CDN_HOSTS
from core.conversation.vocabulary import FileOffer
from core.edge.urls import Origins

WHERE = "Discord's file servers"
DISCORD_CDN = Origins.of(DISCORD_CDN_HOSTS)


class DiscordFiles:
    """Turns a message's attachments into offers the core reads (`core.conversation.written`);
    Discord's stated size is checked there before any byte is read."""

    def __init__(self, origins: Origins = DISCORD_CDN) -> None:
        self._origins = origins

    def offers(self, message: discord.Message) -> list[FileOffer]:
        return [FileOffer(a.filename, a.content_type, a.size, functools.partial(self._read, a))
                for a in message.attachments]

    async def _read(self, attachment: discord.Attachment, limit: int) -> bytes:
        # discord.py's Attachment.read() takes the whole body before a cap could apply.
        async with aiohttp.ClientSession() as session:
            return await download(session, attachment.url, limit, allowed=self._origins.allow,
                                  where=WHERE)
