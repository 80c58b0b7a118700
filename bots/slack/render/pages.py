"""Read-only modals (pure): the whole thinking and tool history of an answer, paginated; a
compaction's summary. The twin of Discord's `render/pages.py`."""

from __future__ import annotations

from typing import Any

from core.conversation.presenting import tool_line
from core.conversation.views import NOTHING_RECORDED, thinking_sections
from core.conversation.vocabulary import ThinkingState
from core.text.splitting import split_markdown

from .. import ids
from .blocks import Block, actions, button, context, plain, section
from .mrkdwn import escape

PAGE_CHARS = 2900
SECTIONS_PER_PAGE = 4


def thinking_pages(state: ThinkingState) -> list[list[str]]:
    """The sections of Show thinking (core's order), in pages of sections."""
    chunks: list[str] = []
    for part in thinking_sections(state):
        if part.tools:
            lines = [f"{escape(tool_line(t))} `{escape(t.args_preview)}`" if t.args_preview
                     else escape(tool_line(t)) for t in part.tools]
            chunks += split_markdown(f"*{part.title}*\n" + "\n".join(lines), PAGE_CHARS)
        else:
            chunks += split_markdown(escape(part.text), PAGE_CHARS)
    chunks = chunks or [f"_{NOTHING_RECORDED}_"]
    return [chunks[i:i + SECTIONS_PER_PAGE] for i in range(0, len(chunks), SECTIONS_PER_PAGE)]


def thinking_modal(message_id: int, pages: list[list[str]], page: int) -> dict[str, Any]:
    """Page `page` (0-based) of the thinking modal, with its page buttons."""
    page = max(0, min(page, len(pages) - 1))
    blocks: list[Block] = [section(chunk) for chunk in pages[page]]
    if len(pages) > 1:
        blocks += [context(f"Page {page + 1} of {len(pages)}"), _page_buttons(message_id, page, len(pages))]
    return {"type": "modal", "title": plain("Thinking", 24), "close": plain("Close", 24),
            "private_metadata": ids.pack(message_id, page), "blocks": blocks}


def _page_buttons(message_id: int, page: int, count: int) -> Block:
    elements = []
    if page > 0:
        elements.append(button("◀ Previous", ids.THINKING_PREVIOUS, ids.pack(message_id, page - 1)))
    if page + 1 < count:
        elements.append(button("Next ▶", ids.THINKING_NEXT, ids.pack(message_id, page + 1)))
    return actions(*elements)


def summary_modal(summary: str) -> dict[str, Any]:
    """What "Show summary" on a compaction divider opens."""
    chunks = split_markdown(escape(summary.strip() or "(empty summary)"), PAGE_CHARS)[:40]
    return {"type": "modal", "title": plain("Summary", 24), "close": plain("Close", 24),
            "blocks": [section(chunk) for chunk in chunks]}
