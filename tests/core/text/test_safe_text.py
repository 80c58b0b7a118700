"""NUL and lone surrogates become U+FFFD; everything else, valid surrogate pairs included, stays.
A title cut to a limit ends after a whole word, with an ellipsis."""

from __future__ import annotations

import pytest

from core.text.safe_text import REPLACEMENT, clean_text, clean_value, shortened

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


@pytest.mark.parametrize(("text", "limit", "title"), [
    ("How do I print double-sided pages?", 30, "How do I print double-sided…"),
    ("How do I rotate the API keys of our staging cluster?", 30, "How do I rotate the API keys…"),
    ("one two three", 8, "one two…"),  # the cut falls on the space after "two"
    ("Why, when, where: a question", 18, "Why, when, where…"),  # no ":" before the ellipsis
    ("Supercalifragilisticexpialidocious words", 10, "Supercali…"),  # one word too long
    ("short", 30, "short"),
    ("exactly ten", 11, "exactly ten"),
])
def test_a_title_is_cut_after_a_whole_word_with_an_ellipsis(text: str, limit: int, title: str) -> None:
    assert shortened(text, limit) == title
    assert len(title) <= limit


def test_a_cut_title_keeps_only_whole_words() -> None:
    text = " ".join(f"word{n}" for n in range(100))
    for limit in range(2, 120):
        title = shortened(text, limit)
        assert len(title) <= limit and title.endswith("…")
        if limit > len("word0…"):
            assert all(word in text.split() for word in title[:-1].split())
