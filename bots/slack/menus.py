"""The model and skill select menus (pure); the chosen option carries the session id."""

from __future__ import annotations

from . import ids
from .blocks import Payload, actions, option, section
from .mrkdwn import escape

MAX_OPTIONS = 100
ACTION = {"model": ids.SET_MODEL, "skill": ids.SET_SKILL}


def choice_menu(kind: str, session_id: int, options: list[tuple[str, str]],
                current: str | None) -> Payload:
    """"Choose a model" with a select of the catalogue, the current choice preselected."""
    if not options:
        text = f"No {kind}s are configured." + (" Add them to MODELS_FILE." if kind == "model"
                                                 else " Add skill folders to SKILLS_DIR.")
        return Payload(text, [section(text)])
    now = f"Current {kind}: `{escape(current)}`." if current else f"No {kind} chosen yet (the default)."
    choices = [option(name, option_value(session_id, value)) for value, name in options[:MAX_OPTIONS]]
    select = {"type": "static_select", "action_id": ACTION[kind], "options": choices,
              "placeholder": {"type": "plain_text", "text": f"Choose a {kind}"}}
    chosen = next((c for c, (value, _) in zip(choices, options, strict=False) if value == current), None)
    if chosen is not None:
        select["initial_option"] = chosen
    return Payload(f"Choose a {kind}", [section(f"{now} Choose the {kind} of this conversation:"),
                                        actions(select)])


def option_value(session_id: int, value: str) -> str:
    return f"{session_id}:{value}"


def parse_option(value: str | None) -> tuple[int, str]:
    """(session id, model id or skill folder) of a chosen option."""
    session, _, chosen = (value or "").partition(":")
    return ids.unpack(session, 1)[0], chosen
