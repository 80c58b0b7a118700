"""A clarify question (pure): the question, one button per choice and "Custom answer…" while
it waits, then who answered what (or that it expired); the modal "Custom answer…" opens; and
why a question takes no more answers, said to whoever tries."""

from __future__ import annotations

from typing import Any

from core.conversation.refusals import question_closed
from core.conversation.vocabulary import PauseStatus, PauseView

from .. import ids
from .blocks import Block, Payload, actions, button, clip, context, plain, section
from .mrkdwn import escape, who

BUTTONS_PER_BLOCK = 25
MAX_ANSWER = 2900


def render_clarify(pause: PauseView) -> Payload:
    """The question; buttons while unanswered, the answer (or expiry) afterwards."""
    question = section(f"❓ *{escape(pause.question)}*")
    if pause.status == PauseStatus.ANSWERED:
        answer = escape(clip(pause.answer or "", MAX_ANSWER))
        answered = f"✅ answered by {who(pause.answered_by)}: {answer}"
        return Payload(f"Answered: {pause.question}", [question, context(answered)])
    if pause.status == PauseStatus.EXPIRED:
        return Payload(f"Expired: {pause.question}", [question, context("⌛ This question expired.")])
    return Payload(f"Question: {pause.question}", [question, *_buttons(pause)])


def _buttons(pause: PauseView) -> list[Block]:
    elements = [button(choice, ids.choice_action(i), ids.pack(pause.pause_id, i))
                for i, choice in enumerate(pause.choices)]
    elements.append(button("Custom answer…", ids.CLARIFY_CUSTOM, ids.pack(pause.pause_id)))
    return [actions(*elements[i:i + BUTTONS_PER_BLOCK])
            for i in range(0, len(elements), BUTTONS_PER_BLOCK)]


def custom_answer_modal(pause_id: int, question: str) -> dict[str, Any]:
    """The modal "Custom answer…" opens; its submission answers the question."""
    field = {"type": "plain_text_input", "action_id": ids.ANSWER_INPUT, "multiline": True}
    return {
        "type": "modal", "callback_id": ids.CUSTOM_ANSWER_VIEW, "private_metadata": ids.pack(pause_id),
        "title": plain("Your answer", 24), "submit": plain("Send", 24), "close": plain("Cancel", 24),
        "blocks": [section(f"❓ *{escape(question)}*"),
                   {"type": "input", "block_id": ids.ANSWER_BLOCK, "element": field,
                    "label": plain("Answer", 2000)}],
    }


def not_open(pause: PauseView) -> str:
    """Why a question takes no more answers (for an ephemeral or a modal error)."""
    return question_closed(pause, f"{who(pause.answered_by)}: {pause.answer}")
