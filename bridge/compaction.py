"""Reads the context summary hermes-agent produced during a turn (pure functions).

The summary is not passed to any callback: it is the message flagged
`_compressed_summary` in the turn's resulting messages.
"""

from __future__ import annotations

import json
from typing import Any

from agent.context_compressor import COMPRESSED_SUMMARY_METADATA_KEY, ContextCompressor

Message = dict[str, Any]


def compaction_data(messages: list[Message], conversation: list[Message]) -> dict[str, Any] | None:
    """`context_compacted` data, or None when the messages hold no summary.

    `conversation` is what the agent was given (history + this user message);
    `compacted_until` counts its leading messages now represented by the summary.
    """
    flagged = [i for i, m in enumerate(messages) if m.get(COMPRESSED_SUMMARY_METADATA_KEY)]
    if not flagged:
        return None
    index = flagged[-1]
    summary = ContextCompressor._strip_summary_prefix(_text(messages[index].get("content")))
    until = _first_kept(messages[index + 1 :], conversation)
    return {"summary": summary, "compacted_until": until}


def _first_kept(tail: list[Message], conversation: list[Message]) -> int | None:
    keys = [(m.get("role"), _text(m.get("content"))) for m in conversation]
    for message in tail:
        if any(k.endswith("_synthetic") and v for k, v in message.items()):
            continue  # e.g. the todo snapshot hermes re-injects after compaction
        key = (message.get("role"), _text(message.get("content")))
        for position in range(len(keys) - 1, -1, -1):
            if keys[position] == key:
                return position
    return None


def _text(content: Any) -> str:
    if content is None:
        return ""
    return content if isinstance(content, str) else json.dumps(content, sort_keys=True)
