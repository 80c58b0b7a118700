"""Custom ids of the bot's buttons, selects and modal: `hermes:<action>[:<arg>...]` (pure).

A custom id carries the database keys a click needs (message, pause, run or session ids), so
every component works after a restart from the database alone. Discord allows 100 characters.
"""

from __future__ import annotations

import re
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
    DECIDE = "decide"  # pause id, decision (once|session|always|deny): a tool approval's button
    SUMMARY = "summary"  # SYSTEM summary message id
    MODEL = "model"  # session id (a select menu)
    SKILL = "skill"  # session id (a select menu)
    NOOP = "noop"  # a disabled label such as "2/3"
    FEEDBACK = "rate"  # assistant message id, good|bad: 👍 / 👎
    BUSY = "busy"  # kept message id, queue|steer: a busy notice's choice


def pattern(action: Action, **groups: str) -> str:
    """The template of one action's custom ids: each argument a named group of the given
    regular expression, in order (`pattern(Action.CHOICE, pause=r"[0-9]+", index=r"[0-9]+")`)."""
    args = "".join(f":(?P<{name}>{regex})" for name, regex in groups.items())
    return f"hermes:{action.value}{args}"


_ANY = re.compile(r"hermes:[a-z]+(?::[0-9A-Za-z_-]+)*")


def encode(action: Action, *args: object) -> str:
    """`hermes:<action>:<arg>...`; ValueError if it would not fit Discord's 100 characters."""
    custom_id = ":".join(("hermes", action.value, *map(str, args)))
    if len(custom_id) > MAX_LENGTH or not _ANY.fullmatch(custom_id):
        raise ValueError(f"not a valid custom id: {custom_id!r}")
    return custom_id
