"""A model's prices in MODELS_FILE and what a call costs at them."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.agent.catalogue import load_catalogue
from core.agent.prices import Price
from core.errors import InvalidInput


def test_a_call_costs_its_uncached_cached_and_completion_tokens_at_their_prices() -> None:
    price = Price(input=2.0, output=8.0, cached=0.5)  # per million tokens
    assert price.cost(1_000_000, 0) == 2.0
    assert price.cost(0, 1_000_000) == 8.0
    assert price.cost(100, 10, cached_tokens=40) == pytest.approx((60 * 2 + 40 * 0.5 + 10 * 8) / 1e6)
    assert Price(2.0, 8.0).cost(100, 10, 40) == Price(2.0, 8.0).cost(100, 10)  # no cache price
    assert price.cost(10, 0, 99) == price.cost(10, 0, 10)  # never more cached than prompted


def catalogue(tmp_path: Path, entry: str):  # noqa: ANN201
    models = tmp_path / "models.toml"
    models.write_text(f'[[models]]\nid = "fast"\n{entry}\n', encoding="utf-8")
    return load_catalogue(str(models), str(tmp_path))


def test_the_catalogue_reads_prices_per_million_tokens(tmp_path: Path) -> None:
    entry = catalogue(tmp_path, "input_price = 0.15\noutput_price = 0.6\ncached_price = 0.075")
    assert entry.model("fast").price == Price(0.15, 0.6, 0.075)
    assert catalogue(tmp_path, "output_price = 1").model("fast").price == Price(0.0, 1.0)
    assert catalogue(tmp_path, "").model("fast").price is None  # tokens only
    assert catalogue(tmp_path, "cached_price = 0.1").model("fast").price is None


@pytest.mark.parametrize("bad", ["input_price = -1", 'output_price = "cheap"',
                                 "cached_price = true"])
def test_a_price_that_is_no_amount_is_refused_naming_it(tmp_path: Path, bad: str) -> None:
    with pytest.raises(InvalidInput, match=f"model 'fast' .*{bad.split()[0]}"):
        catalogue(tmp_path, bad)
