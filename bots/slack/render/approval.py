"""A tool approval (pure): the command hermes-agent flagged, in a code block that cannot break,
with the tool and the reason; one button per decision while it waits, then who decided what.

"Always allow" is shown to everyone (the message is the same for the whole channel); a click
on it by someone who is not a chat admin is refused privately (core.chat.policy).
"""

from __future__ import annotations

from dataclasses import replace

from core.conversation.presenting import APPROVAL_LABELS, approval_outcome, approval_question
from core.conversation.vocabulary import PauseView

from .. import ids
from .blocks import Block, Payload, actions, button, context, section
from .mrkdwn import code_block, escape, who

MAX_COMMAND = 2900  # the code block's characters (a section takes 3000)
STYLES = {"once": "primary", "deny": "danger"}


def render_approval(pause: PauseView) -> Payload:
    """The approval; its buttons while it waits, the decision (or expiry) afterwards."""
    shown = replace(pause, tool=(pause.tool or "").replace("`", "'") or None)
    blocks: list[Block] = [section(escape(approval_question(shown))),
                           section(code_block(pause.question, MAX_COMMAND))]
    outcome = approval_outcome(replace(pause, answered_by=who(pause.answered_by)))
    if outcome is not None:
        return Payload(f"{outcome}: {pause.question}", [*blocks, context(outcome)])
    buttons = [button(APPROVAL_LABELS.get(choice, choice), ids.approval_action(choice),
                      ids.pack(pause.pause_id), STYLES.get(choice))
               for choice in pause.choices]
    return Payload(f"Approve? {pause.question}", [*blocks, actions(*buttons)])
