"""The busy notice (pure): a message refused while its thread's answer is being written, with
Stop for that answer and, for the message kept for its author, the other choices: queue it,
or give it to the answer as guidance (their values: the kept message's id)."""

from __future__ import annotations

from core.conversation.refusals import BUSY_CHOICES, QUEUE_IT, STEER_WITH_IT, chosen

from .. import ids
from .blocks import Payload, actions, button, section


def busy_notice(text: str, running: str | None, parked: int | None = None) -> Payload:
    """The notice: `text` (BUSY_CHOICES when the message was kept), Stop for `running`, and
    Queue it / Steer with it for the kept message `parked`."""
    text = BUSY_CHOICES if parked is not None else text
    buttons = [button("Stop", ids.STOP, ids.run_value(running), "danger")] if running else []
    if parked is not None:
        buttons += [button(QUEUE_IT, ids.BUSY_QUEUE, str(parked), "primary"),
                    button(STEER_WITH_IT, ids.BUSY_STEER, str(parked))]
    return Payload(text, [section(text), *([actions(*buttons)] if buttons else [])])


def busy_chosen(choice: str, user: str) -> Payload:
    """The notice once its message's author chose: what became of it, no buttons."""
    text = chosen(choice, f"<@{user}>")
    return Payload(text, [section(text)])
