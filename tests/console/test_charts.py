"""The usage charts' geometry, without a browser: bars in proportion to their amounts, the
largest the longest, the amounts written short."""

from __future__ import annotations

from console.charts import COLUMN_HEIGHT, WIDTH, amount_text, bars_across, bars_up


def test_bars_across_are_in_proportion_and_keep_their_order() -> None:
    chart = bars_across("Tokens by model", [("large", 400.0), ("small", 100.0), ("none", 0.0)])
    large, small, none = chart.bars
    assert large.width == 4 * small.width and large.x + large.width <= WIDTH
    assert none.width == 0 and [b.y for b in chart.bars] == sorted(b.y for b in chart.bars)
    assert chart.horizontal and chart.summary == "Tokens by model: large: 400, small: 100, none: 0"


def test_bars_up_stand_on_one_line_the_tallest_for_the_most() -> None:
    chart = bars_up("Tokens by day", [("2026-12-01", 50.0), ("2026-12-02", 200.0)])
    first, second = chart.bars
    assert second.height == COLUMN_HEIGHT and first.height == COLUMN_HEIGHT / 4
    assert first.y + first.height == second.y + second.height  # the same baseline
    assert second.x > first.x and not chart.horizontal


def test_nothing_recorded_draws_no_bar_and_says_so() -> None:
    assert bars_across("Tokens by person", []).bars == ()
    assert bars_up("Tokens by day", [("2026-12-01", 0.0)]).bars[0].height == 0
    assert bars_across("Tokens by person", []).summary == "Tokens by person: nothing recorded"


def test_amounts_are_written_short() -> None:
    assert [amount_text(a) for a in (0, 999, 12_345, 2_500_000, 3e9)] == [
        "0", "999", "12.3k", "2.5M", "3.0G"]
