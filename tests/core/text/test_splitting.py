"""Markdown splitting on the parser's blocks: limits, cuts between blocks, code fences closed and
reopened with their own fence, list and quote markers kept, nothing lost (see
`tests/core/text/markdown_reading.py` for exactly what each part may differ in)."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.text.splitting import split_markdown
from tests.core.text.markdown_reading import Reading, assert_parts

PLATFORM_LIMITS = (2900, 3900, 4000, 12000)  # Slack section, Discord page, Discord embed, Slack markdown block
SMALL_LIMITS = st.integers(min_value=40, max_value=400)
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def split(text: str, limit: int) -> list[str]:
    parts = split_markdown(text, limit)
    assert_parts(text, parts, limit)
    return parts


# -- the inputs of issue 17 that broke the regex splitter ------------------------------------

README = ("````markdown\n# My project\n\n```bash\npip install my-project\n```\n\nThen run it.\n````\n\n"
          "Save it as README.md.")
LIST_FENCE = "1. ```bash\n   pip install foo\n   ```\n\n2. Run it.\n\nDone."
INDENTED_FENCE = ("1. Install the tools:\n\n    ```bash\n"
                  + "".join(f"    apt-get install -y tool-{n}\n" for n in range(3)) + "\n"
                  + "".join(f"    apt-get install -y tool-{n}\n" for n in range(3, 6))
                  + "    ```\n\n2. Run them.")
INLINE_AT_START = ("``` aa ``` is inline code, not a fence.\n\nThe rest of the answer is prose, "
                   "and it stays prose.\n\n```py\nprint(1)\n```")


def test_a_readme_in_a_four_backtick_block_is_left_whole() -> None:
    assert split(README, 4000) == [README]


def test_a_readme_in_a_four_backtick_block_is_cut_on_its_own_fence() -> None:
    assert split(README, 60) == [
        "````markdown\n# My project\n\n```bash\n````",
        "````markdown\npip install my-project\n```\n\nThen run it.\n````",
        "Save it as README.md.",
    ]


def test_a_fence_opened_on_a_list_items_line_is_seen() -> None:
    assert split(LIST_FENCE, 4000) == [LIST_FENCE]
    assert split(LIST_FENCE, 40) == ["1. ```bash\n   pip install foo\n   ```", "2. Run it.\n\nDone."]


def test_a_fence_indented_four_spaces_in_a_list_item_is_closed_and_reopened_in_the_item() -> None:
    # The regex splitter saw no fence: it cut at the blank line, with no fence on either side.
    # The blank line of code at the cut is dropped.
    assert split(INDENTED_FENCE, 4000) == [INDENTED_FENCE]
    assert split(INDENTED_FENCE, 120) == [
        "1. Install the tools:",
        "1.\n    ```bash\n    apt-get install -y tool-0\n    apt-get install -y tool-1\n"
        "    apt-get install -y tool-2\n   ```",
        "1.\n    ```bash\n    apt-get install -y tool-3\n    apt-get install -y tool-4\n"
        "    apt-get install -y tool-5\n    ```",
        "2. Run them.",
    ]


def test_inline_code_at_a_lines_start_is_not_a_fence() -> None:
    assert split(INLINE_AT_START, 70) == [
        "``` aa ``` is inline code, not a fence.",
        "The rest of the answer is prose, and it stays prose.",
        "```py\nprint(1)\n```",
    ]


# -- examples --------------------------------------------------------------------------------

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
    parts = split(text, 500)
    assert len(parts) > 5 and all(len(p) <= 500 for p in parts)
    code_parts = [p for p in parts if "print(" in p]
    assert all((p.startswith("```python\n") and p.endswith("\n```")) or p.endswith("That is all.")
               for p in code_parts)
    joined_code = "\n".join(line for p in code_parts for line in p.splitlines()
                            if line.startswith("print("))
    assert joined_code == code
    assert parts[-1].endswith("That is all.")


def test_an_unclosed_fence_is_closed() -> None:
    parts = split_markdown("```\nnever closed", 100)
    assert parts == ["```\nnever closed\n```"]


def test_an_unclosed_fence_in_a_list_item_is_closed_inside_the_item() -> None:
    # CommonMark ends the fence with the item, after the blank line; the closing line goes
    # before it, where the code ends.
    assert split("- ~~~~\n  never closed\n\nAfter.", 100) == ["- ~~~~\n  never closed\n  ~~~~\n\nAfter."]


def test_an_unclosed_fence_is_closed_after_its_last_line_of_code() -> None:
    assert split("```py\ncode\n\n\n", 40) == ["```py\ncode\n```"]


def test_a_code_line_over_the_limit_by_its_trailing_blanks_alone_is_not_cut() -> None:
    code = "x" * 70 + "word word"
    assert split(f"```\n{code} ", 87) == [f"```\n{code}\n```"]


def test_a_part_never_starts_with_a_paragraphs_line_that_would_read_as_a_list() -> None:
    # "2. Reboot" goes on the paragraph (an ordered list not at 1 cannot interrupt one); at the
    # start of a part it would be a list item.
    text = "First run the installer and wait, then go to step\n2. Reboot, log in again and check the logs."
    assert split(text, 52) == ["First run the installer and wait, then go to step\n2.",
                               "Reboot, log in again and check the logs."]
    assert split(text, 50) == ["First run the installer and wait, then go to",
                               "step\n2. Reboot, log in again and check the logs."]


def test_a_part_that_starts_inside_an_html_block_writes_its_first_line_again() -> None:
    # Inside the HTML block nothing is a fence or a list; alone, the rest would be.
    text = "<div>\n2. step two of the page\n- a dash line here\n```\nnot a fence, HTML\n</div>"
    assert split(text, 50) == ["<div>\n2. step two of the page\n- a dash line here",
                               "<div>\n```\nnot a fence, HTML\n</div>"]


def test_a_giant_word_is_cut() -> None:
    parts = split_markdown("x" * 250, 100)
    assert [len(p) for p in parts] == [100, 100, 50]


def test_a_long_paragraph_in_a_quote_keeps_its_marker_on_a_lazy_line() -> None:
    text = "> quote line one\nlazy line two is long enough\n> three"
    assert split(text, 40) == ["> quote line one", "> lazy line two is long enough\n> three"]


def test_a_long_list_item_keeps_its_marker_in_the_next_part() -> None:
    text = "- " + " ".join(f"word{n}" for n in range(20)) + "\n- next"
    assert split(text, 60) == [
        "- word0 word1 word2 word3 word4 word5 word6 word7 word8",
        "- word9 word10 word11 word12 word13 word14 word15 word16",
        "- word17 word18 word19\n- next",
    ]


def test_a_quoted_list_cut_in_two_keeps_its_markers_and_its_fence() -> None:
    text = ("> Steps:\n>\n> 1. Install it:\n>    ```bash\n>    pip install tool\n>    pip install tool-extras\n"
            ">    ```\n> 2. Configure it, in a file that you keep next to the project, then run it.")
    assert split(text, 60) == [
        "> Steps:",
        "> 1. Install it:\n>    ```bash\n>    pip install tool\n>    ```",
        "> 1. ```bash\n>    pip install tool-extras\n>    ```",
        "> 2. Configure it, in a file that you keep next to the",
        "> 2. project, then run it.",
    ]


def test_no_part_ends_with_an_opening_fence_or_a_tables_header_alone() -> None:
    code = "value = compute(1)  # first step here\n"
    fence = split("Here is the script:\n\n```python\n" + code * 3 + "```", 60)
    assert fence == ["Here is the script:", *[f"```python\n{code}```"] * 3]
    rows = [f"| {n} | the name of number {n} |" for n in range(3)]
    table = split("The numbers:\n\n| n | name |\n|---|---|\n" + "\n".join(rows), 60)
    assert table == ["The numbers:", *[f"| n | name |\n|---|---|\n{row}" for row in rows]]


def test_a_long_table_repeats_its_header() -> None:
    rows = "\n".join(f"| {n} | value {n} |" for n in range(12))
    text = f"| n | value |\n|---|---|\n{rows}"
    parts = split(text, 100)
    assert len(parts) > 1
    assert all(p.startswith("| n | value |\n|---|---|\n| ") for p in parts)


def test_a_cut_inside_a_line_does_not_leave_a_fence_or_a_list_at_the_start_of_a_part() -> None:
    text = "x" * 30 + " word 2. two ```py and - dash " + "y" * 30
    parts = split(text, 40)
    assert all(Reading(p).shape(0) == ("paragraph_open",) for p in parts), parts


def test_blank_lines_at_the_ends_and_crlf_line_ends() -> None:
    assert split_markdown("\n\n  \r\nfirst\r\n\r\nsecond\n\n", 4000) == ["first\n\nsecond"]
    assert split_markdown("", 100) == [""] and split_markdown(" \n ", 100) == [""]


def test_a_limit_under_40_is_refused() -> None:
    with pytest.raises(ValueError, match="40"):
        split_markdown("text", 39)


def test_nesting_too_deep_for_the_limit_is_cut_as_plain_text_within_it() -> None:
    text = "> > > - 1. - ~~~~~~~~markdown title\n" + "".join(
        f"> > >        ~~~~~~~~ {n} {'z' * 30}\n" for n in range(5))
    parts = split_markdown(text, 40)
    assert all(len(p) <= 40 for p in parts)
    assert _squash("".join(parts)) == _squash(text) + "~~~~~~~~"  # the fence closed, nothing lost


def _squash(text: str) -> str:
    return re.sub(r"[\s>]", "", text)


# -- properties over generated Markdown ------------------------------------------------------

WORDS = st.sampled_from(["word", "two", "`x`", "**bold**", "_it_", "x" * 70, "日本語の文です",
                         "a|b", "<b>", "[link](http://e.x)", "2.", "-", "#"])
LINE_STARTS = st.sampled_from(["", "", "", "``` aa ``` ", "`` b `` ", "`code` ", "~~ "])
CODE = st.sampled_from(["print(1)", "", "    indented()", "x = '" + "y" * 60 + "'", "# not a heading",
                        "- not a list", "> not a quote", "| not | a table |", "\tfmt.Println()"])


def inner_fence(depth: int) -> st.SearchStrategy[str]:
    """A fence line inside a code block (it may close it and open another)."""
    return st.builds(lambda c, n, i: c * n + i, st.sampled_from("`~"), st.integers(3, 6 if depth < 2 else 4),
                     st.sampled_from(["", "bash", " x"] if depth < 2 else ["", " x"]))


@st.composite
def paragraph(draw: st.DrawFn, depth: int) -> list[str]:
    # (no line of dashes alone: it would make the paragraph a setext heading, which a cut
    # inside would turn back into a paragraph; see test_a_setext_heading_over_the_limit)
    words = st.lists(WORDS, min_size=1, max_size=10).filter(lambda w: set(w) != {"-"})
    lines = draw(st.lists(words, min_size=1, max_size=4))
    return [draw(LINE_STARTS) + " ".join(words) for words in lines]


@st.composite
def fence(draw: st.DrawFn, depth: int) -> list[str]:
    char = draw(st.sampled_from("`~"))
    # Deeper, a part has less room for the lines it repeats: at the smallest limit, with two
    # containers around it, a longer fence leaves none (the splitter then cuts it as plain text,
    # see test_nesting_too_deep_for_the_limit_is_cut_as_plain_text_within_it).
    size = draw(st.integers(3, 6 if depth < 2 else 4))
    info = draw(st.sampled_from(["", "py", "bash", "js", *(["markdown"] if depth == 0 else [])]))
    body = draw(st.lists(st.one_of(CODE, CODE, inner_fence(depth)), max_size=12))
    closing = draw(st.sampled_from([char * size, char * size, char * (size + 1), None]))
    return [char * size + info, *body, *([closing] if closing else [])]


@st.composite
def table(draw: st.DrawFn, depth: int) -> list[str]:
    rows = st.sampled_from(["| 1 | two |", "| `x` | **b** |", "| " + "z" * 50 + " | q |"])
    return ["| a | b |", "|---|---|", *draw(st.lists(rows, min_size=1, max_size=10))]


@st.composite
def heading(draw: st.DrawFn, depth: int) -> list[str]:
    return ["#" * draw(st.integers(1, 3)) + " " + " ".join(draw(st.lists(WORDS, min_size=1, max_size=5)))]


@st.composite
def bulleted(draw: st.DrawFn, depth: int) -> list[str]:
    ordered, bullet = draw(st.booleans()), draw(st.sampled_from("-*+"))
    loose = draw(st.booleans())
    lines: list[str] = []
    for number in range(1, draw(st.integers(1, 4)) + 1):
        marker = f"{number}{draw(st.sampled_from('.)'))}" if ordered else bullet
        # Blocks indented past the marker, as models do (not deeper in, and with no list in
        # them: a part that goes on inside an item in such an item has to write both markers
        # on lines of their own, and at the smallest limits has no room left for a fence's
        # lines; see test_nesting_too_deep_for_the_limit_is_cut_as_plain_text_within_it).
        extra = draw(st.sampled_from(["", "", " "] if depth == 0 else [""]))
        first, *rest = draw(blocks(depth + 1, lists=not extra))
        lines.append(f"{marker} {first}")
        lines += [" " * (len(marker) + 1) + extra + line if line else "" for line in rest]
        if loose:
            lines.append("")
    return lines


@st.composite
def quote(draw: st.DrawFn, depth: int) -> list[str]:
    return [f"> {line}" if line else ">" for line in draw(blocks(depth + 1))]


@st.composite
def blocks(draw: st.DrawFn, depth: int = 0, lists: bool = True) -> list[str]:
    kinds = [paragraph, paragraph, fence, fence, heading]
    kinds += [table] if depth < 2 else []
    kinds += [quote] if depth < 2 else []
    kinds += [bulleted] if depth < 2 and lists else []
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 3 if depth else 5))):
        if lines:
            lines.append("")
        kind = draw(st.sampled_from(kinds))
        lines += draw(kind(depth))
    return lines


MARKDOWN = blocks().map("\n".join)


@FAST
@given(MARKDOWN, SMALL_LIMITS)
def test_generated_markdown_splits_at_small_limits(text: str, limit: int) -> None:
    split(text, limit)


@settings(max_examples=40, deadline=None)
@given(st.lists(MARKDOWN, min_size=8, max_size=12), st.sampled_from(PLATFORM_LIMITS))
def test_generated_long_answers_split_at_the_platforms_limits(texts: list[str], limit: int) -> None:
    long_code = "```python\n" + "\n".join(f"step_{n} = run({n})  # {'c' * (n % 40)}" for n in range(400)) + "\n```"
    split("\n\n".join([*texts, long_code, *texts]), limit)


PROSE = st.lists(st.sampled_from(["word ", "\n", "\n\n", "x" * 70, "- item\n", "**b** "]), max_size=120)
ANY = st.lists(st.sampled_from(["word ", "\n", "\n\n", "```py\n", "```\n", "~~~\n", "x" * 70]), max_size=120)


@FAST
@given(PROSE, SMALL_LIMITS)
def test_prose_soup_splits(tokens: list[str], limit: int) -> None:
    split("".join(tokens), limit)


@FAST
@given(ANY, SMALL_LIMITS)
def test_fence_soup_splits(tokens: list[str], limit: int) -> None:
    split("".join(tokens), limit)


# Text from a model is untrusted: any mix of Markdown's marks, NUL, tabs, line ends of all kinds.
MARKS = st.lists(st.sampled_from([*"`~>-*+#|=_ \t\n1.)xyz<!\\[]:", "```", "~~~", "    ", "\n\n", "1. ", "- ",
                                  "> ", "日", "\0", "\r\n", "\r", "\ud800"]), max_size=300)


@FAST
@given(MARKS, SMALL_LIMITS)
def test_any_soup_of_markdown_marks_splits(tokens: list[str], limit: int) -> None:
    split("".join(tokens), limit)
