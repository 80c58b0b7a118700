"""Ephemeral pages: the whole thinking of an answer (paginated), a compaction summary."""

from __future__ import annotations

import discord

from bots.discord import ids
from bots.discord.render.parts import ButtonSpec, FilePart, Part, clip
from core.conversation.views import NOTHING_RECORDED, thinking_sections
from core.conversation.vocabulary import ThinkingState, ToolCall
from core.text.splitting import split_markdown

PAGE_CHARS = 3900


def thinking_pages(state: ThinkingState) -> list[str]:
    """The sections of Show thinking (core's order) split into pages."""
    marks = {"Thinking": "💭", "Tools": "🧰"}
    sections = [f"**{marks.get(part.title, '')} {part.title}**\n"
                + (part.text if not part.tools else "\n".join(_tool(t) for t in part.tools))
                for part in thinking_sections(state)]
    return split_markdown("\n\n".join(sections) or f"*({NOTHING_RECORDED})*", PAGE_CHARS)


def _tool(tool: ToolCall) -> str:
    mark = "✗" if tool.is_error else "✓" if tool.finished else "…"
    line = f"{mark} **{tool.name}** `{clip(tool.args_preview, 150)}`"
    if tool.result_preview:
        line += f" → {clip(tool.result_preview, 300)}"
    return line


def thinking_page(pages: list[str], index: int, message_id: int) -> Part:
    """Page `index` (clamped) with ◀ ▶ when there is more than one."""
    index = max(0, min(index, len(pages) - 1))
    embed = discord.Embed(description=pages[index], colour=discord.Colour.blurple())
    if len(pages) == 1:
        return Part(embed)
    embed.set_footer(text=f"Page {index + 1} of {len(pages)}")

    def turn(label: str, target: int) -> ButtonSpec:
        if 0 <= target < len(pages):
            return ButtonSpec(label, ids.encode(ids.Action.PAGE, message_id, target))
        side = "first" if target < 0 else "last"
        return ButtonSpec(label, ids.encode(ids.Action.NOOP, side), disabled=True)

    return Part(embed, (turn("◀", index - 1), turn("▶", index + 1)))


def divider_part(summary_id: int) -> Part:
    """Posted where the agent compacted its context; the summary is one click away."""
    embed = discord.Embed(
        description="✂️ ─── Earlier messages were summarised to fit the model's context ───",
        colour=discord.Colour.dark_grey(),
    )
    button = ButtonSpec("Show summary", ids.encode(ids.Action.SUMMARY, summary_id), emoji="📜")
    return Part(embed, (button,))


def summary_part(summary: str) -> Part:
    """The summary; a long one is attached whole as well."""
    pages = split_markdown(summary or "(empty)", PAGE_CHARS)
    embed = discord.Embed(title="📜 Summary of the earlier conversation", description=pages[0])
    if len(pages) == 1:
        return Part(embed)
    embed.set_footer(text="The whole summary is attached.")
    return Part(embed, file=FilePart("summary.md", summary.encode()))
