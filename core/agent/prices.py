"""What a model call costs at a model's prices (MODELS_FILE: per million tokens), pure.

Providers count the cached tokens of a prompt among its prompt tokens and bill them at their
own (lower) price: the uncached part at `input`, the cached part at `cached` (the input price
when the catalogue gives none), the completion at `output`.
"""

from __future__ import annotations

from dataclasses import dataclass

PER = 1_000_000  # prices are per million tokens


@dataclass(frozen=True, slots=True)
class Price:
    """A model's prices per million tokens, in the catalogue's currency (USD unless said)."""

    input: float = 0.0
    output: float = 0.0
    cached: float | None = None  # None: cached prompt tokens cost the input price

    def cost(self, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> float:
        """What one call with these tokens costs."""
        cached = min(max(cached_tokens, 0), prompt_tokens)
        cached_price = self.input if self.cached is None else self.cached
        return ((prompt_tokens - cached) * self.input + cached * cached_price
                + completion_tokens * self.output) / PER
