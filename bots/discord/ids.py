"""Custom ids of the bot's buttons, selects and modal: `hermes:<action>[:<arg>...]`.

A custom id carries the database keys a click needs (message, pause, run or session ids), so
every component works after a restart from the database alone. Discord allows 100 characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

MAX_LENGTH = 100


class Action(StrEnum):
    REGENERATE = "regen"  # assistant message id
    VERSION = "ver"  # the assistant message id to show
    THINKING = "think"  # assistant message id: open "Show thinking"
    PAGE = "page"  # assistant message id, page: turn a page of it
    STOP = "stop"  # run id
    CHOICE = "pick"  # pause id, index of the choice
    CUSTOM = "custom"  # pause id: open the Custom answer modal
    ANSWER = "answer"  # pause id: the modal's submission
    SUMMARY = "summary"  # SYSTEM summary message id
    MODEL = "model"  # session id (a select menu)
    SKILL = "skill"  # session id (a select menu)
    NOOP = "noop"  # a disabled label such as "2/3"
    FEEDBACK = "rate"  # assistant message id, good|bad: 👍 / 👎


BUTTONS = (Action.REGENERATE, Action.VERSION, Action.THINKING, Action.PAGE, Action.STOP,
           Action.CHOICE, Action.CUSTOM, Action.SUMMARY, Action.NOOP, Action.FEEDBACK)
SELECTS = (Action.MODEL, Action.SKILL)


def template(actions: tuple[Action, ...]) -> str:
    """The regular expression discord.py matches custom ids of these actions against."""
    names = "|".join(a.value for a in actions)
    return rf"hermes:(?P<action>{names})(?P<args>(?::[0-9A-Za-z_-]+)*)"


_ANY = re.compile(template(tuple(Action)))


@dataclass(frozen=True, slots=True)
class ActionId:
    """A decoded custom id."""

    action: Action
    args: tuple[str, ...] = ()

    def number(self, index: int = 0) -> int:
        """Argument `index` as an integer id (ValueError/IndexError if it is not one)."""
        return int(self.args[index])

    def encode(self) -> str:
        return encode(self.action, *self.args)


def encode(action: Action, *args: object) -> str:
    """`hermes:<action>:<arg>...`; ValueError if it would not fit Discord's 100 characters."""
    custom_id = ":".join(("hermes", action.value, *map(str, args)))
    if len(custom_id) > MAX_LENGTH or not _ANY.fullmatch(custom_id):
        raise ValueError(f"not a valid custom id: {custom_id!r}")
    return custom_id


def decode(custom_id: str) -> ActionId | None:
    """The action of one of our custom ids, or None for anything else."""
    match = _ANY.fullmatch(custom_id)
    if match is None:
        return None
    args = tuple(a for a in match["args"].split(":") if a)
    return ActionId(Action(match["action"]), args)
