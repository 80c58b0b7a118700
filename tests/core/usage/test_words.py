"""How usage reads in footers, exports and `/hermes usage`."""

from __future__ import annotations

from core.agent.thinking import UsageTotals
from core.usage import words


def test_amounts_show_cents_or_their_first_two_significant_digits() -> None:
    assert [words.money(a) for a in (1234.5, 0.01, 0.0042, 0.0000363, 0.0)] == [
        "$1,234.50", "$0.01", "$0.0042", "$0.000036", "$0"]


def test_tokens_name_the_cached_ones_and_the_cost_only_when_priced() -> None:
    priced = UsageTotals(2, 2000, 468, 0, 0.0042)
    assert words.spent(priced) == "2,468 tokens (2,000 in, 468 out) · $0.0042"
    assert words.spent(priced, cost=False) == "2,468 tokens (2,000 in, 468 out)"
    assert words.spent(UsageTotals(1, 1000, 234, 600)) == "1,234 tokens (1,000 in, 600 cached, 234 out)"
