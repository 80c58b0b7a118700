"""Reading what the scripted LLM was given of a thread's context (both platforms' tests)."""

from __future__ import annotations

from typing import Any

from core.chat.thread_context import HEADING


def user_turns(request: dict[str, Any]) -> list[Any]:
    """The content of every user message of an LLM request, in order."""
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


def context_part(content: Any) -> str:
    """The thread-context text part of a user message's content (it comes first)."""
    assert isinstance(content, list) and content[0]["text"].startswith(HEADING), content
    return str(content[0]["text"])


def lines_in_order(context: str, *lines: str) -> None:
    """Each of `lines` is a message of the context (`] author: words`), in this order."""
    at = [context.find(f"] {line}\n") for line in lines]
    assert -1 not in at and at == sorted(at), (lines, context)
