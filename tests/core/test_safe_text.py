"""NUL and lone surrogates become U+FFFD; everything else, valid surrogate pairs included, stays."""

from __future__ import annotations

from core.safe_text import REPLACEMENT, clean_text, clean_value

LONE_HIGH, LONE_LOW = "\ud83d", "\ude00"


def test_nul_and_each_lone_half_of_a_pair_are_replaced() -> None:
    assert clean_text("a\x00b") == f"a{REPLACEMENT}b"
    assert clean_text(f"x{LONE_HIGH}y{LONE_LOW}z") == f"x{REPLACEMENT}y{REPLACEMENT}z"
    assert clean_text(f"{LONE_LOW}{LONE_HIGH}") == REPLACEMENT * 2  # in the wrong order: no pair
    cleaned = clean_text("\x00" * 3 + LONE_HIGH)
    assert cleaned == REPLACEMENT * 4 and cleaned.encode("utf-8")


def test_other_text_is_kept_as_it_is() -> None:
    text = "naïve 😀 — 日本語\n\ttabs \x01 \x7f \ufffd"
    assert clean_text(text) is text  # nothing to replace: no copy either
    assert clean_text("") == ""


def test_every_string_of_a_value_is_cleaned_keys_too() -> None:
    value = {"a\x00": ["ok", {"deep": f"x{LONE_HIGH}"}, 3, None, True], "n": 1.5,
             "t": ("y\x00",)}
    assert clean_value(value) == {f"a{REPLACEMENT}": ["ok", {"deep": f"x{REPLACEMENT}"}, 3, None,
                                                        True],
                                  "n": 1.5, "t": [f"y{REPLACEMENT}"]}
