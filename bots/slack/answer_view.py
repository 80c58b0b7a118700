"""The finished turn (pure): the answer in mrkdwn, split within Slack's limits, its footer and
buttons (Regenerate, the version switcher "◀ 2/3 ▶", Show thinking). A failed turn offers
"Retry" instead of Regenerate: the same click, re-running the user's message."""

from __future__ import annotations

from dataclasses import dataclass

from core import presenting
from core.conversation.views import Versions
from core.models import MessageStatus
from core.runtime.updates import RunUpdate
from core.splitting import split_markdown

from . import ids
from .blocks import MAX_TEXT, Block, Payload, actions, button, clip, context, section
from .live_view import BRANCHED
from .mrkdwn import escape, to_mrkdwn

SECTION_CHARS = 2900  # per section, under Slack's 3,000 with room to spare
SECTIONS_PER_MESSAGE = 3
MAX_MESSAGES = 3  # beyond this the full answer goes up as a file
PREVIEW_TEXT = 3000
ATTACHED = "_The full answer is long, so it is attached below as a Markdown file._"


@dataclass(frozen=True, slots=True)
class AnswerLayout:
    main: Payload
    followups: list[Payload]
    attachment: str | None = None  # the whole answer in Markdown, to upload as a file


def answer_groups(markdown: str) -> list[list[str]]:
    """The answer's mrkdwn in sections, grouped by message (fences closed and reopened)."""
    chunks = split_markdown(to_mrkdwn(markdown), SECTION_CHARS)
    return [chunks[i:i + SECTIONS_PER_MESSAGE] for i in range(0, len(chunks), SECTIONS_PER_MESSAGE)]


def render_answer(update: RunUpdate, versions: Versions = Versions(), branched: bool = False) -> AnswerLayout:
    """The message(s) of a finished turn; the first replaces the live message."""
    head = [context(BRANCHED)] if branched else []
    tail = [context(escape(presenting.footer(update))), _buttons(update, versions)]
    if update.status != MessageStatus.SUCCESS:
        status = presenting.status_line(update)
        return AnswerLayout(Payload(status, [*head, section(f"*{escape(status)}*"), *tail]), [])
    groups = answer_groups(update.state.final_text or "") or [[""]]
    if len(groups) > MAX_MESSAGES:
        main = Payload(_preview(groups[0][0]), [*head, section(groups[0][0]), section(ATTACHED), *tail])
        return AnswerLayout(main, [], update.state.final_text)
    main = Payload(_preview(groups[0][0]), [*head, *map(section, groups[0]), *tail])
    followups = [Payload(_preview(g[0]), [section(s) for s in g]) for g in groups[1:]]
    return AnswerLayout(main, followups)


def _preview(text: str) -> str:
    return clip(text, min(PREVIEW_TEXT, MAX_TEXT)) or "(empty answer)"


def _buttons(update: RunUpdate, versions: Versions) -> Block:
    message_id = update.message_id
    elements = [_again(update)]
    if versions.total > 1:
        elements += _switcher(message_id, versions)
    elements.append(button("Show thinking", ids.SHOW_THINKING, ids.pack(message_id)))
    return actions(*elements)


def _again(update: RunUpdate) -> Block:
    """Regenerate, or for a failed turn a prominent Retry (it does the same)."""
    value = ids.pack(update.message_id)
    if update.status == MessageStatus.FAILED:
        return button("🔁 Retry", ids.REGENERATE, value, "primary")
    return button("Regenerate", ids.REGENERATE, value)


def _switcher(message_id: int, versions: Versions) -> list[Block]:
    label = f"{versions.position}/{versions.total}"
    elements = []
    if versions.previous_id is not None:
        elements.append(button("◀", ids.PREVIOUS, ids.pack(message_id, versions.previous_id)))
    elements.append(button(label, ids.POSITION, ids.pack(message_id)))
    if versions.next_id is not None:
        elements.append(button("▶", ids.NEXT, ids.pack(message_id, versions.next_id)))
    return elements
