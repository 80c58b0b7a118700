"""The finished turn (pure): the answer as `markdown` blocks (mrkdwn as the fallback text),
split within Slack's limits, its footer and buttons (Regenerate, the version switcher
"◀ 2/3 ▶", Show thinking) and 👍 / 👎. A failed turn offers "Retry" instead of Regenerate:
the same click, re-running the user's message."""

from __future__ import annotations

from dataclasses import dataclass

from core import presenting
from core.conversation.views import Versions
from core.models import MessageStatus
from core.runtime.updates import RunUpdate
from core.splitting import split_markdown

from . import ids
from .blocks import (
    MAX_MARKDOWN,
    MAX_TEXT,
    Block,
    Payload,
    actions,
    button,
    clip,
    context,
    feedback_buttons,
    markdown,
    section,
)
from .live_view import BRANCHED
from .mrkdwn import escape, to_mrkdwn

MAX_MESSAGES = 3  # beyond this the full answer goes up as a file
PREVIEW_TEXT = 3000
EMPTY = "(empty answer)"
ATTACHED = "_The full answer is long, so it is attached below as a Markdown file._"


@dataclass(frozen=True, slots=True)
class AnswerLayout:
    main: Payload
    followups: list[Payload]
    attachment: str | None = None  # the whole answer in Markdown, to upload as a file


def answer_parts(markdown: str) -> list[str]:
    """The answer in parts of one `markdown` block each (Slack renders them: tables too, and
    nested fences, which mrkdwn flattens); fences are closed and reopened across parts."""
    return split_markdown(markdown.strip(), MAX_MARKDOWN) if markdown.strip() else []


def render_answer(update: RunUpdate, versions: Versions = Versions(), branched: bool = False) -> AnswerLayout:
    """The message(s) of a finished turn; the first replaces the live message."""
    head = [context(BRANCHED)] if branched else []
    tail = answer_controls(update, versions)
    if update.status != MessageStatus.SUCCESS:
        status = presenting.status_line(update)
        return AnswerLayout(Payload(status, [*head, section(f"*{escape(status)}*"), *tail]), [])
    parts = answer_parts(update.state.final_text or "") or [EMPTY]
    if len(parts) > MAX_MESSAGES:
        main = Payload(fallback_text(parts[0]), [*head, markdown(parts[0]), section(ATTACHED), *tail])
        return AnswerLayout(main, [], update.state.final_text)
    main = Payload(fallback_text(parts[0]), [*head, markdown(parts[0]), *tail])
    return AnswerLayout(main, [Payload(fallback_text(p), [markdown(p)]) for p in parts[1:]])


def answer_controls(update: RunUpdate, versions: Versions) -> list[Block]:
    """What ends every answer: the footer, our buttons and (for an answer) 👍 / 👎."""
    blocks = [context(escape(presenting.footer(update))), _buttons(update, versions)]
    if update.status == MessageStatus.SUCCESS:
        blocks.append(feedback_buttons(ids.FEEDBACK, ids.feedback_value("good", update.message_id),
                                       ids.feedback_value("bad", update.message_id)))
    return blocks


def fallback_text(markdown_part: str) -> str:
    """The `text` beside the blocks (notifications, old clients): mrkdwn, clipped."""
    return clip(to_mrkdwn(markdown_part), min(PREVIEW_TEXT, MAX_TEXT)) or EMPTY


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
