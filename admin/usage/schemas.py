"""Answer bodies of what model calls spent (camelCase JSON)."""

from __future__ import annotations

import msgspec

from core.conversation.vocabulary import UsageTotals


class UsageOut(msgspec.Struct, frozen=True, rename="camel"):
    """What model calls spent: how many, their tokens as the model reported them
    (`promptTokens` includes `cachedTokens`; `tokens` is prompt and completion, what a token
    limit counts) and their cost at the prices of their day (null: none was priced)."""

    calls: int
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    tokens: int
    cost: float | None


def usage_out(usage: UsageTotals) -> UsageOut:
    return UsageOut(usage.calls, usage.prompt_tokens, usage.completion_tokens,
                    usage.cached_tokens, usage.tokens, usage.cost)
