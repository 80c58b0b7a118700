"""Each model call's usage, as the provider reported it, as a `usage` event
(docs/bridge-protocol.md).

hermes-agent hands every model response's usage, normalised into its canonical buckets, to its
context engine (`context_compressor.update_from_response`) right after the call returns and
before the call's tools run; the chat-completions loop and the Codex runtime alike. The tap
wraps that method on the session's agent for one turn (an instance attribute, removed by
`remove`), so each call that reported usage is one event, emitted before the `checkpoint` of
its step: a continuation from that checkpoint never makes the call again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from bridge.emitter import RunEmitter

logger = logging.getLogger(__name__)
_HOOK = "update_from_response"


class UsageTap:
    """Follows one turn's model calls on the session's agent (agent thread only)."""

    def __init__(self, emitter: RunEmitter, model: str) -> None:
        self._emitter = emitter
        self._model = model
        self._engine: Any = None

    def install(self, agent: Any) -> None:
        """Wrap the agent's context engine's usage hook; an engine that takes no attribute
        (a plugin with slots) reports nothing, with a warning."""
        engine = getattr(agent, "context_compressor", None)
        original = getattr(engine, _HOOK, None)
        if original is None:
            return
        try:
            setattr(engine, _HOOK, self._wrap(original))
        except AttributeError:
            logger.warning("the agent's context engine %s takes no usage tap: model calls "
                           "are not counted", type(engine).__name__)
            return
        self._engine = engine

    def remove(self) -> None:
        if self._engine is not None:
            self._engine.__dict__.pop(_HOOK, None)
            self._engine = None

    def _wrap(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def tapped(usage: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
            data = usage_data(usage, self._model)
            if data is not None:
                self._emitter.emit("usage", data)
            return original(usage, *args, **kwargs)
        return tapped


def usage_data(usage: Any, model: str) -> dict[str, Any] | None:
    """The `usage` event of one call from hermes-agent's usage dict (None: the call reported
    none). `prompt_tokens` includes the cached ones, as providers count them."""
    if not isinstance(usage, dict) or not usage:
        return None
    return {"model": model, "prompt_tokens": _count(usage.get("prompt_tokens")),
            "completion_tokens": _count(usage.get("completion_tokens")),
            "cached_tokens": _count(usage.get("cache_read_tokens"))}


def _count(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0
