"""Action ids, callback ids and button values (pure).

Everything a click needs is in the click: values carry database ids (pause, message, run,
session), so buttons keep working after a restart and on any replica.
"""

from __future__ import annotations

import re

from core.errors import InvalidInput

OURS = "hermes."  # how every action and callback id of ours starts
COMMAND = "/hermes"
CLARIFY_CHOICE = "hermes.clarify.choice"  # + ".<index>": action ids are unique per message
CLARIFY_CUSTOM = "hermes.clarify.custom"
CUSTOM_ANSWER_VIEW = "hermes.clarify.answer"  # the modal's callback_id
ANSWER_BLOCK, ANSWER_INPUT = "answer", "text"
APPROVAL = "hermes.approval"  # + ".<decision>" (once, session, always, deny); value: the pause id
STOP = "hermes.run.stop"
BUSY_QUEUE, BUSY_STEER = "hermes.busy.queue", "hermes.busy.steer"  # value: the kept message's id
REGENERATE = "hermes.answer.regenerate"
PREVIOUS, NEXT, POSITION = "hermes.answer.previous", "hermes.answer.next", "hermes.answer.position"
SHOW_THINKING = "hermes.answer.thinking"
THINKING_PREVIOUS, THINKING_NEXT = "hermes.thinking.previous", "hermes.thinking.next"
SHOW_SUMMARY = "hermes.summary.show"
FEEDBACK = "hermes.answer.feedback"  # values "good:<message id>" / "bad:<message id>"
SET_MODEL, SET_SKILL = "hermes.session.model", "hermes.session.skill"

CLARIFY_CHOICE_PATTERN = re.compile(rf"^{re.escape(CLARIFY_CHOICE)}\.\d+$")
APPROVAL_PATTERN = re.compile(rf"^{re.escape(APPROVAL)}\.[a-z]+$")
SWITCH_PATTERN = re.compile(rf"^({re.escape(PREVIOUS)}|{re.escape(NEXT)})$")
THINKING_PAGE_PATTERN = re.compile(rf"^({re.escape(THINKING_PREVIOUS)}|{re.escape(THINKING_NEXT)})$")


def choice_action(index: int) -> str:
    return f"{CLARIFY_CHOICE}.{index}"


def approval_action(decision: str) -> str:
    return f"{APPROVAL}.{decision}"


def decision_of(action_id: str) -> str:
    """The decision an approval button stands for ("once", "deny", …)."""
    return action_id.removeprefix(f"{APPROVAL}.")


def pack(*ids: int) -> str:
    """"12:3": the ids a button carries."""
    return ":".join(str(i) for i in ids)


def unpack(value: str | None, count: int) -> tuple[int, ...]:
    """The `count` ids of a value made by `pack`; InvalidInput for anything else."""
    parts = (value or "").split(":")
    if len(parts) != count or not all(p.isascii() and p.isdigit() for p in parts):
        raise InvalidInput(f"this button carries an unexpected value {value!r}")
    return tuple(int(p) for p in parts)


def first_id(value: str | None) -> int:
    """The first id a value made by `pack` carries (a clarify choice: the pause's)."""
    return unpack(value, len((value or "").split(":")))[0]


def run_value(run_id: str) -> str:
    return run_id


def parse_run(value: str | None) -> str:
    if not value or not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", value):
        raise InvalidInput(f"this button carries an unexpected run id {value!r}")
    return value


def feedback_value(value: str, message_id: int) -> str:
    return f"{value}:{message_id}"


def parse_feedback(value: str | None) -> tuple[str, int]:
    """("good" | "bad", message id) of a feedback button; InvalidInput for anything else."""
    kind, _, rest = (value or "").partition(":")
    if kind not in ("good", "bad"):
        raise InvalidInput(f"this button carries an unexpected value {value!r}")
    (message_id,) = unpack(rest, 1)
    return kind, message_id
