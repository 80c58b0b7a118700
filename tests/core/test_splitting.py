"""Markdown splitting: limits, paragraph boundaries, code fences closed and reopened."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from core.splitting import split_markdown


def fences_balanced(part: str) -> bool:
    """CommonMark's rule: a fence opens with any info string, closes only with none."""
    open_fence = ""
    for line in part.splitlines():
        match = re.match(r"^\s{0,3}(```|~~~)(.*)$", line)
        if match and not open_fence:
            open_fence = match.group(1)
        elif match and match.group(1) == open_fence and not match.group(2).strip():
            open_fence = ""
    return not open_fence


def test_short_text_is_one_part() -> None:
    assert split_markdown("hello **world**", 100) == ["hello **world**"]


def test_parts_break_between_paragraphs() -> None:
    text = "\n\n".join(f"Paragraph {i} " + "words " * 10 for i in range(10))
    parts = split_markdown(text, 200)
    assert all(len(p) <= 200 for p in parts)
    assert all(p.startswith("Paragraph") for p in parts)
    assert "\n\n".join(parts) == text


def test_a_long_code_block_is_closed_and_reopened_with_its_language() -> None:
    code = "\n".join(f"print({i})  # line {i}" for i in range(200))
    text = f"Here is the script:\n\n```python\n{code}\n```\n\nThat is all."
    parts = split_markdown(text, 500)
    assert len(parts) > 5 and all(len(p) <= 500 for p in parts)
    assert all(fences_balanced(p) for p in parts)
    code_parts = [p for p in parts if "print(" in p]
    assert all("```python" in p for p in code_parts)
    joined_code = "\n".join(line for p in code_parts for line in p.splitlines()
                            if line.startswith("print("))
    assert joined_code == code
    assert parts[-1].endswith("That is all.")


def test_an_unclosed_fence_is_closed() -> None:
    parts = split_markdown("```\nnever closed", 100)
    assert parts == ["```\nnever closed\n```"]


def test_a_giant_word_is_cut() -> None:
    parts = split_markdown("x" * 250, 100)
    assert [len(p) for p in parts] == [100, 100, 50]


PROSE = st.lists(st.sampled_from(["word ", "\n", "\n\n", "x" * 70, "- item\n", "**b** "]), max_size=120)
ANY = st.lists(st.sampled_from(["word ", "\n", "\n\n", "```py\n", "```\n", "~~~\n", "x" * 70]),
               max_size=120)


@given(PROSE, st.integers(min_value=40, max_value=400))
def test_prose_parts_fit_and_keep_every_character(tokens: list[str], limit: int) -> None:
    text = "".join(tokens)
    parts = split_markdown(text, limit)
    assert all(len(p) <= limit for p in parts)
    assert re.sub(r"\s", "", "".join(parts)) == re.sub(r"\s", "", text)


@given(ANY, st.integers(min_value=40, max_value=400))
def test_parts_with_code_fit_and_balance_their_fences(tokens: list[str], limit: int) -> None:
    parts = split_markdown("".join(tokens), limit)
    assert all(len(p) <= limit for p in parts)
    assert all(fences_balanced(p) for p in parts)
