"""Area ① of the thinking state: the streamed text, appended without copying what came before."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ThinkingText:
    """Append-only streamed text: O(1) append, chunks shared between successive states.

    Nothing is cut (the whole stream is kept), but no append copies what came before;
    `tail` reads only the end, which is what live renderers show.
    """

    prev: ThinkingText | None = None
    chunk: str = ""
    length: int = 0

    def append(self, delta: str) -> ThinkingText:
        """This text followed by `delta`."""
        return ThinkingText(self, delta, self.length + len(delta)) if delta else self

    def tail(self, limit: int) -> str:
        """The last `limit` characters, reading only the chunks needed."""
        parts: list[str] = []
        size = 0
        for chunk in self._backwards():
            if size >= limit:
                break
            parts.append(chunk)
            size += len(chunk)
        text = "".join(reversed(parts))
        return text[-limit:] if limit > 0 else ""

    def _backwards(self) -> Iterator[str]:
        node: ThinkingText | None = self
        while node is not None:
            yield node.chunk
            node = node.prev

    def __str__(self) -> str:
        return "".join(reversed(list(self._backwards())))

    def __len__(self) -> int:
        return self.length

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ThinkingText):
            return NotImplemented
        return self.length == other.length and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))

    def __repr__(self) -> str:
        return f"ThinkingText({str(self)!r})"
