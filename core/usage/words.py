"""How an amount of usage reads, the same in a footer, an export and `/hermes usage` (pure)."""

from __future__ import annotations

import math

from core.agent.thinking import UsageTotals


def tokens(usage: UsageTotals) -> str:
    """"1,234 tokens (1,200 in, 34 out)", the cached ones named when there are some."""
    cached = f", {usage.cached_tokens:,} cached" if usage.cached_tokens else ""
    return (f"{usage.tokens:,} tokens ({usage.prompt_tokens:,} in{cached}, "
            f"{usage.completion_tokens:,} out)")


def spent(usage: UsageTotals, cost: bool = True) -> str:
    """The tokens, then " · $0.0042" when `cost` and the calls were priced."""
    words = tokens(usage)
    if cost and usage.cost is not None:
        words += f" · {money(usage.cost)}"
    return words


def money(amount: float) -> str:
    """An amount in dollars: cents from a cent up, else its first two significant digits
    ("$12.30", "$0.0042", "$0.000036")."""
    if amount >= 0.01:
        return f"${amount:,.2f}"
    if amount <= 0:
        return "$0"
    places = -math.floor(math.log10(amount)) + 1
    return f"${amount:.{places}f}"
