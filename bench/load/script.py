"""What each conversation says and what the scripted model answers it: a todo tool call with a
line of text, then a final answer streamed as a few text deltas (after `think` seconds of
thought, in the one-workspace burst). Every text carries the conversation's number, so an
answer shown in the wrong thread is caught."""

from __future__ import annotations

import re
from typing import Any

from tests.fakes.llm_server import Reply, ToolCall, text_reply, tool_reply

_NUMBER = re.compile(r"\bload-(\d+)\b")
CHUNK = 12  # characters per streamed delta: a final answer arrives as ~4 text events


def question(number: int) -> str:
    return f"load-{number}: plan the release checklist, please"


def answer(number: int) -> str:
    return f"Answer for load-{number}: the checklist is planned."


def respond(body: dict[str, Any], think: float = 0.0) -> Reply:
    """The model's turn: plan (a todo call) after the user's message, answer after the tool's
    (having thought `think` seconds first)."""
    messages = body.get("messages") or [{}]
    asked = [m.get("content") for m in messages if m.get("role") == "user"]
    found = _NUMBER.search(str(asked[-1]) if asked else "")
    number = int(found.group(1)) if found else 0
    if messages[-1].get("role") == "tool":
        return text_reply(answer(number), chunk_size=CHUNK, think=think)
    todo = {"todos": [{"id": "1", "content": f"checklist of load-{number}",
                       "status": "in_progress"}]}
    return tool_reply(ToolCall("todo", todo), text=f"Planning load-{number}.", chunk_size=CHUNK)
