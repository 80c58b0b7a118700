"""`/hermes status`: this conversation's settings and run, and the runs in flight overall."""

from __future__ import annotations

import discord

from core.models import ChatSession, MessageStatus
from core.presenting import status_line
from core.runtime.updates import RunUpdate


def status_embed(session: ChatSession | None, active: list[RunUpdate]) -> discord.Embed:
    embed = discord.Embed(title="📊 Hermes status", colour=discord.Colour.blurple())
    if session is None:
        embed.description = "No conversation here: mention me to start one."
    else:
        own = next((u for u in active if u.session_id == session.id), None)
        embed.add_field(name="This conversation", inline=False, value="\n".join([
            f"**{session.title or 'Untitled'}**",
            f"Model: `{session.model_id or 'default'}` · Skill: `{session.skill_folder or 'none'}`",
            status_line(own) if own else "Idle: no run in flight.",
        ]))
    running = sum(1 for u in active if u.status == MessageStatus.RUNNING)
    queued = len(active) - running
    embed.add_field(name="All conversations", value=f"{running} running · {queued} queued", inline=False)
    return embed
