"""Hands events from the agent's thread to the run's log on the event loop, coalescing
streamed text so a fast model does not produce one SSE event per token, replacing NUL and lone
surrogates in every string (model text, tool arguments and results alike), and blanking the
run's API key out of every event: some providers echo it back in a 401, and what the Bridge
emits is stored, shown in the chat and exported."""

from __future__ import annotations

import asyncio
from typing import Any

from bridge.run_log import RunLog
from core.logs import MIN_SECRET, REDACTED
from core.text.safe_text import clean_text, clean_value

TEXT_FLUSH_SECONDS = 0.05  # a delta waits at most this long (plus loop latency) to be sent
TEXT_FLUSH_CHARS = 2048


class RunEmitter:
    """Thread-safe front of a RunLog. Every call keeps the order in which it was made."""

    def __init__(self, log: RunLog, loop: asyncio.AbstractEventLoop, secret: str = "") -> None:
        self.log = log
        self._secret = secret if len(secret) >= MIN_SECRET else ""
        self._loop = loop
        self._text: list[str] = []
        self._size = 0
        self._timer: asyncio.TimerHandle | None = None
        self._closed = False  # the Bridge stops: the run's log ends here, unended

    def text(self, delta: str) -> None:
        """A streamed text delta (any thread)."""
        self._call(self._add_text, delta)

    def emit(self, name: str, data: dict[str, Any]) -> None:
        """Any other event (any thread); pending text goes out first."""
        self._call(self.emit_now, name, data)

    def emit_now(self, name: str, data: dict[str, Any]) -> None:
        """Same as `emit`, on the event loop itself."""
        self.flush()
        if not self._closed:
            self.log.append(name, self._clean(data))

    def close(self) -> None:
        """Emit nothing more (event loop only): what the agent does from now on is not kept."""
        self.flush()
        self._closed = True

    def flush(self) -> None:
        """Send the buffered text as one `text` event (event loop only)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._text:
            text, self._text, self._size = "".join(self._text), [], 0
            if not self._closed:
                self.log.append("text", self._clean({"text": text}))

    def _add_text(self, delta: str) -> None:
        self._text.append(delta)
        self._size += len(delta)
        if self._size >= TEXT_FLUSH_CHARS:
            self.flush()
        elif self._timer is None:
            self._timer = self._loop.call_later(TEXT_FLUSH_SECONDS, self.flush)

    def _clean(self, value: Any) -> Any:
        """Every string made storable (NUL, lone surrogates: core/text/safe_text.py) and the key
        blanked out: a string that cannot be encoded would end the run's SSE stream."""
        return clean_value(value, self._clean_text)

    def _clean_text(self, text: str) -> str:
        text = clean_text(text)
        return text.replace(self._secret, REDACTED) if self._secret else text

    def _call(self, fn: Any, *args: Any) -> None:
        if not self._loop.is_closed():
            self._loop.call_soon_threadsafe(fn, *args)
