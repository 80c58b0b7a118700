"""`/hermes status`: this conversation's settings and run, and the runs in flight overall;
`/hermes usage`: what the person's messages spent today and this month."""

from __future__ import annotations

import discord

from core.conversation.commands import OwnUsage, Status
from bots.discord.render.parts import clip
from core.conversation.presenting import status_line

FIELD_CHARS = 1024  # Discord's limit of an embed field's value


def status_embed(status: Status) -> discord.Embed:
    embed = discord.Embed(title="📊 Hermes status", colour=discord.Colour.blurple())
    session = status.session
    if session is None:
        embed.description = "No conversation here: mention me to start one."
    else:
        own = status.current
        embed.add_field(name="This conversation", inline=False, value="\n".join([
            f"**{session.title or 'Untitled'}**",
            f"Model: `{session.model_id or 'default'}` · Skill: `{session.skill_folder or 'none'}`",
            status_line(own) if own else "Idle: no run in flight.",
        ]))
        embed.add_field(name="Channel settings", inline=False,
                        value=clip(status.settings or "the service's own", FIELD_CHARS))
    embed.add_field(name="All conversations", inline=False,
                    value=f"{status.running} running · {status.queued} queued")
    return embed


def usage_embed(usage: OwnUsage) -> discord.Embed:
    embed = discord.Embed(title="🪙 What your messages have spent (UTC)",
                          colour=discord.Colour.blurple())
    for label, words in usage.lines():
        embed.add_field(name=label, value=words, inline=False)
    if usage.limits:
        embed.add_field(name="Your limits", value="\n".join(usage.limits), inline=False)
    return embed
