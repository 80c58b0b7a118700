"""What a continuation of a turn needs: the agent's messages so far (docs/bridge-protocol.md,
`checkpoint`), and the conversation a continuation hands back to hermes-agent.

hermes-agent keeps a turn's messages in a list local to `run_conversation`; it hands that list
to `AIAgent._persist_session` when the turn starts (the user message appended) and to
`_flush_messages_to_session_db` before each batch of tool calls runs, so this tap wraps both
on the session's agent for one turn and snapshots the list at the callbacks that mark a
completed step (the next `step` begins, a clarify is asked).

A continuation is a turn whose history is the stored messages; `run_conversation` always
appends a user message, so a resumed turn passes a marker as its user message and the tap
takes it off again at the turn's start, before the model ever sees it.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)
Message = dict[str, Any]
RESUME_MARKER = "[hermes-chat: continue the interrupted turn]"  # only ever sent when resuming
_WRAPPED = ("_persist_session", "_flush_messages_to_session_db")


class ConversationTap:
    """Follows one turn's live message list on the session's agent (agent thread only)."""

    def __init__(self, resuming: bool = False) -> None:
        self._resuming = resuming
        self._messages: list[Message] | None = None
        self._lock = threading.Lock()

    def install(self, agent: Any) -> None:
        """Wrap the agent's two persistence hooks (instance attributes: removed by `remove`)."""
        for name in _WRAPPED:
            setattr(agent, name, self._wrap(getattr(agent, name)))

    def remove(self, agent: Any) -> None:
        for name in _WRAPPED:
            agent.__dict__.pop(name, None)

    def snapshot(self) -> list[Message] | None:
        """A JSON copy of the messages so far (None before the turn started)."""
        with self._lock:
            messages = self._messages
        if messages is None:
            return None
        return as_json(messages)

    def _wrap(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def tapped(messages: list[Message], *args: Any, **kwargs: Any) -> Any:
            self._follow(messages)
            return original(messages, *args, **kwargs)
        return tapped

    def _follow(self, messages: list[Message]) -> None:
        if self._resuming and messages and _is_marker(messages[-1]):
            messages.pop()  # the continuation's stand-in user message: never sent, never kept
            self._resuming = False
        with self._lock:
            self._messages = messages


def as_json(messages: list[Message]) -> list[Message]:
    """The messages as plain JSON values, without hermes-agent's private keys (`_db_persisted`
    and the like); a list another thread appends to meanwhile is copied again."""
    for _ in range(3):
        try:
            text = json.dumps([_public(m) for m in list(messages)], default=str)
        except RuntimeError:  # a dict changed size while it was read
            continue
        return json.loads(text)
    logger.warning("could not snapshot the turn's messages: they kept changing")
    return []


def continuation(messages: list[Message], clarify: tuple[str, str] | None) -> list[Message]:
    """The history of a resumed turn: the stored messages, and the clarify tool's result (the
    answer, as hermes-agent's clarify tool words it) when the turn waited on one."""
    history = [dict(m) for m in messages]
    if clarify is not None:
        call_id, answer = clarify
        history.append(_clarify_result(history, call_id, answer))
    return history


def before_tool_calls(messages: list[Message]) -> list[Message]:
    """The messages before the latest assistant message that called tools (and its results):
    the turn as it was before the model asked for the step now waiting."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, dict) and message.get("role") == "assistant" \
                and message.get("tool_calls"):
            return messages[:index]
    return messages


def _clarify_result(history: list[Message], call_id: str, answer: str) -> Message:
    from agent.tool_dispatch_helpers import make_tool_result_message

    args = _call_arguments(history, call_id)
    content = json.dumps({"question": str(args.get("question", "")),
                          "choices_offered": args.get("choices") or None,
                          "user_response": answer.strip()}, ensure_ascii=False)
    return make_tool_result_message("clarify", content, call_id)


def _call_arguments(history: list[Message], call_id: str) -> dict[str, Any]:
    for message in reversed(history):
        for call in message.get("tool_calls") or ():
            if isinstance(call, dict) and call.get("id") == call_id:
                raw = (call.get("function") or {}).get("arguments") or "{}"
                try:
                    parsed = json.loads(raw) if isinstance(raw, str) else raw
                except ValueError:
                    return {}
                return parsed if isinstance(parsed, dict) else {}
    return {}


def _public(message: Any) -> Any:
    if not isinstance(message, dict):
        return message
    return {k: v for k, v in message.items() if not str(k).startswith("_")}


def _is_marker(message: Any) -> bool:
    return (isinstance(message, dict) and message.get("role") == "user"
            and message.get("content") == RESUME_MARKER)
