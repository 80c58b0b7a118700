"""Block Kit primitives and Slack's size limits, as plain dicts (pure).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Block = dict[str, Any]

MAX_TEXT = 4000  # chars of a message's `text`
MAX_SECTION = 3000  # chars of a section's text
MAX_BLOCKS = 50  # blocks of a message
MAX_CONTEXT = 2000  # chars of one context element, kept well under Slack's 3,000
MAX_BUTTON_TEXT = 75
MAX_VALUE = 2000
MAX_MARKDOWN = 12_000  # chars of all `markdown` blocks of one message


@dataclass(frozen=True, slots=True)
class Payload:
    """One message as chat.postMessage / chat.update take it."""

    text: str
    blocks: list[Block] = field(default_factory=list)


def clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, with an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def plain(text: str, limit: int = MAX_BUTTON_TEXT) -> dict[str, Any]:
    return {"type": "plain_text", "text": clip(text, limit) or " ", "emoji": True}


def section(text: str) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": clip(text, MAX_SECTION) or " "}}


def context(text: str) -> Block:
    return {"type": "context",
            "elements": [{"type": "mrkdwn", "text": clip(text, MAX_CONTEXT) or " "}]}


def divider() -> Block:
    return {"type": "divider"}


def button(text: str, action_id: str, value: str, style: str | None = None) -> Block:
    element: Block = {"type": "button", "text": plain(text), "action_id": action_id,
                      "value": value[:MAX_VALUE]}
    return {**element, "style": style} if style else element


def actions(*elements: Block, block_id: str | None = None) -> Block:
    block: Block = {"type": "actions", "elements": list(elements)}
    return {**block, "block_id": block_id} if block_id else block


def option(text: str, value: str) -> dict[str, Any]:
    return {"text": plain(text), "value": value[:150]}


def markdown(text: str) -> Block:
    """Standard Markdown, rendered by Slack (tables too); at most MAX_MARKDOWN a message."""
    return {"type": "markdown", "text": clip(text, MAX_MARKDOWN) or " "}


def feedback_buttons(action_id: str, good: str, bad: str) -> Block:
    """👍 / 👎 in a `context_actions` block; each button's value says which was clicked."""
    element = {"type": "feedback_buttons", "action_id": action_id,
               "positive_button": {"text": plain("👍"), "value": good[:MAX_VALUE],
                                   "accessibility_label": "Good answer"},
               "negative_button": {"text": plain("👎"), "value": bad[:MAX_VALUE],
                                   "accessibility_label": "Bad answer"}}
    return {"type": "context_actions", "elements": [element]}
