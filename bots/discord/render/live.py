"""The live message of a run in flight: one embed edited as the run's state changes."""

from __future__ import annotations

import discord

from bots.discord import ids
from bots.discord.render.parts import ButtonSpec, Part, clip, fit_lines
from core.conversation.presenting import footer, recent_tools, status_line, thinking_tail, todo_lines
from core.conversation.vocabulary import MessageStatus, RunUpdate

THINKING_CHARS = 1500
FIELD = 1024  # Discord's limit of an embed field value
COLOURS = {
    MessageStatus.QUEUED: discord.Colour.light_grey(),
    MessageStatus.RUNNING: discord.Colour.blurple(),
    MessageStatus.SUCCESS: discord.Colour.green(),
    MessageStatus.FAILED: discord.Colour.red(),
    MessageStatus.STOPPED: discord.Colour.dark_grey(),
}


def colour(status: MessageStatus) -> discord.Colour:
    return COLOURS.get(status, discord.Colour.blurple())


def live_part(update: RunUpdate, note: str | None = None) -> Part:
    """Status line, thinking tail, current tool, todos, recent tools; a Stop button."""
    embed = discord.Embed(description=_description(update), colour=colour(update.status))
    if note:
        embed.set_author(name=note)
    for name, value in _fields(update):
        embed.add_field(name=name, value=value, inline=False)
    embed.set_footer(text=footer(update))
    return Part(embed, (stop_button(update.run_id),))


def stop_button(run_id: str) -> ButtonSpec:
    return ButtonSpec("Stop", ids.encode(ids.Action.STOP, run_id), "danger", emoji="⏹")


def _description(update: RunUpdate) -> str:
    tail = thinking_tail(update.state, THINKING_CHARS).strip()
    if not tail:
        return status_line(update)
    return f"{status_line(update)}\n\n>>> {tail}"


def _fields(update: RunUpdate) -> list[tuple[str, str]]:
    state = update.state
    fields: list[tuple[str, str]] = []
    tool = state.current_tool
    if tool is not None:
        args = f"\n`{clip(tool.args_preview, 200)}`" if tool.args_preview not in ("", "{}") else ""
        fields.append(("🔧 Current tool", clip(f"**{tool.name}**{args}", FIELD)))
    if state.todos:
        fields.append(("📝 Todos", fit_lines(todo_lines(state.todos), FIELD)))
    if state.tools:
        fields.append(("🧰 Recent tools", fit_lines(recent_tools(state, 5), FIELD)))
    return fields
