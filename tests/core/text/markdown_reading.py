"""What the splitting tests assert about parts, read with markdown-it-py on its own (not through
`core.text.markdown_blocks`), so that the tests do not take the splitter's word for its structure.

`assert_parts(original, parts, limit)` asserts, for the parts of one text:
- each part is within the limit;
- every part parses with its code fences closed, and the parts' fences are the original's, in
  order, each with its own fence characters and length and its info string; a fence cut in two
  shows as fences in consecutive parts whose contents join back to the original's (blanks at
  the cut aside);
- nothing is lost: walking the original's lines, each part is the next original lines, except,
  and exactly:
  * blank lines at a cut are dropped (in code: lines the parser reads as blank code; outside:
    lines of blanks and `>`, but for the first line of a quote);
  * a part that starts inside list items may first have up to one line per item holding only
    its marker; a part that starts inside a code block repeats its opening fence line, inside a
    table its header and delimiter rows, inside an HTML block its first line (compared without
    markers and indentation);
  * the first line of a part after the first may differ from the original line in its quote
    and list markers and leading blanks (what the part writes again), nothing else;
  * a part that ends inside a code block ends with a closing line that is its fence exactly
    (markers and indentation aside), and a fence the original left open is closed by such a
    line after its last line that is not blank;
  * a line longer than a part is cut: its pieces, in consecutive parts, join back to it with
    blanks at the cut dropped (each piece after the first may follow markers and blanks, and a
    heading's `#` marker);
  and every non-blank line of a part is read in the same blocks as its original line (same
  quotes, lists, items, and same leaf: paragraph, fence, table row, HTML block...), which is
  what keeps list and quote markers;
- a cut falls inside a block only when that block alone (its lines, plus the few characters a
  part needs to say which list items it is in, and the closing line of a fence left open) is
  over the limit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from markdown_it import MarkdownIt
from markdown_it.token import Token

MD = MarkdownIt("commonmark").enable("table")
_MARKERS = re.compile(r"(?:[ \t]*(?:>|[-+*](?=[ \t]|$)|\d{1,9}[.)](?=[ \t]|$)))*[ \t]*")
_WRITTEN_BEFORE = re.compile(r"[ \t>]*(?:(?:[-+*]|\d{1,9}[.)])[ \t]+[ \t>]*)*(?:#{1,6} )?")
_TABLE_INSIDES = frozenset({"thead_open", "tbody_open", "tr_open", "th_open", "td_open"})
MARKER_ALLOWANCE = 8  # characters per enclosing list item a part may need to say it is in it


def bare(line: str) -> str:
    """A line without its leading quote and list markers and blanks."""
    match = _MARKERS.match(line)
    return line[match.end():] if match else line


def blankish(line: str) -> bool:
    return not line.replace(">", "").strip()


class Reading:
    """How markdown-it reads a text: its lines, their blocks, its fences and tables."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.tokens = [t for t in MD.parse(text) if t.nesting >= 0 and t.type != "inline" and t.map]

    def covering(self, line: int) -> list[Token]:
        return [t for t in self.tokens if t.map and t.map[0] <= line < t.map[1]]

    def shape(self, line: int) -> tuple[str, ...]:
        return tuple(t.type for t in self.covering(line))

    def fences(self) -> list[Token]:
        return [t for t in self.tokens if t.type == "fence"]

    @staticmethod
    def closed(fence: Token) -> bool:
        """Whether the parser found the fence's closing line: its content holds every line of
        its range but the first and that one."""
        first, end = fence.map or (0, 0)
        content = fence.content
        return (not content or content.endswith("\n")) and content.count("\n") == end - first - 2

    def end(self, fence: Token) -> int:
        """One past the fence's last line; for one left open, one past its last line that is
        not blank, where a closing line is added."""
        first, end = fence.map or (0, 0)
        if self.closed(fence):
            return end
        code = fence.content.split("\n")[:end - first - 1]  # its lines after the opening one
        while code and not code[-1].strip():
            code.pop()
        return first + 1 + len(code)

    def open_fence(self, line: int) -> Token | None:
        """The fence a part that starts at `line` is inside: after its opening line and not
        past its closing one (or, for one left open, its end, where a closing line is added)."""
        for fence in self.fences():
            first, end = (fence.map or (0, 0))[0], self.end(fence)
            if first < line < end or (line == end and not self.closed(fence)):
                return fence
        return None

    def open_table(self, line: int) -> Token | None:
        return next((t for t in self.tokens if t.type == "table_open" and t.map
                     and t.map[0] + 2 <= line < t.map[1]), None)

    def open_html(self, line: int) -> Token | None:
        return next((t for t in self.tokens if t.type == "html_block" and t.map
                     and t.map[0] < line < t.map[1]), None)

    def items_around(self, line: int, inside_line: bool) -> int:
        """List items around `line` that started before it (or on it, for a cut inside it)."""
        return sum(1 for t in self.covering(line) if t.type == "list_item_open" and t.map
                   and (t.map[0] < line or (inside_line and t.map[0] == line)))

    def in_fence(self, line: int) -> bool:
        return any(f.map and f.map[0] < line < self.end(f) for f in self.fences())

    def skip_blank(self, line: int) -> int:
        """The next line that is not blank (in code too): a line holding only `>` is blank,
        unless a quote starts on it (an empty quote, or one whose text starts below)."""
        while line < len(self.lines) and self.blank(line) \
                and not any(t.type == "blockquote_open" and t.map and t.map[0] == line for t in self.tokens):
            line += 1
        return line

    def blank(self, line: int) -> bool:
        """Whether the line holds only blanks and `>`, or in code (fenced or indented), only
        blanks (as the parser reads the code, without the markers of its quotes and items)."""
        for fence in self.fences():
            first = (fence.map or (0, 0))[0]
            if first < line < self.end(fence):  # its code, or its closing line
                code = fence.content.split("\n")[:self.end(fence) - first - 1 - self.closed(fence)]
                return line - first - 1 < len(code) and not code[line - first - 1].strip()
        for block in self.tokens:
            if block.type == "code_block" and block.map and block.map[0] <= line < block.map[1]:
                return not block.content.split("\n")[line - block.map[0]].strip()
        return blankish(self.lines[line])


@dataclass
class _Walk:
    original: Reading
    line: int = 0
    carry: str | None = None  # what is left of a line cut inside


def assert_parts(original: str, parts: list[str], limit: int) -> None:
    """Every property the module's docstring lists (line ends `\r\n` and `\r` read as `\n`)."""
    assert all(len(part) <= limit for part in parts), [len(p) for p in parts]
    original = original.replace("\r\n", "\n").replace("\r", "\n")
    cuts = assert_nothing_lost(original, parts)
    assert_same_fences(original, parts)
    assert_cuts_inside_only_big_blocks(original, cuts, limit)


def assert_same_fences(original: str, parts: list[str]) -> None:
    """The fences of the module's docstring."""
    wanted = Reading(original).fences()
    got: list[tuple[int, Token]] = []
    for index, part in enumerate(parts):
        reading = Reading(part)
        assert all(reading.closed(fence) for fence in reading.fences()), part
        got += [(index, fence) for fence in reading.fences()]
    at = 0
    for fence in wanted:
        joined, in_part = None, -1
        while joined is None or _squash(joined) != _squash(fence.content):
            assert at < len(got), f"fence {fence.markup}{fence.info} missing"
            assert joined is None or got[at][0] == in_part + 1, "a fence cut in two goes on in the next part"
            in_part, piece = got[at]
            at += 1
            assert (piece.markup, piece.info.strip()) == (fence.markup, fence.info.strip())
            joined = (joined or "") + piece.content
            assert _squash(fence.content).startswith(_squash(joined))
    assert at == len(got), "parts have fences the original does not"


def _squash(text: str) -> str:
    return re.sub(r"\s", "", text)


def assert_nothing_lost(original: str, parts: list[str]) -> list[tuple[int, bool]]:
    """The walk of the module's docstring; returns where each cut fell: (line, inside it)."""
    walk, cuts = _Walk(Reading(original)), []
    for index, part in enumerate(parts):
        if walk.carry is None:
            walk.line = walk.original.skip_blank(walk.line)
        if index:
            cuts.append((walk.line, walk.carry is not None))
        lines = part.split("\n") if part else []  # the one empty part of a blank text
        walk = _own_part(walk, Reading(part), lines, index)
    assert walk.carry is None, f"the rest of a cut line is missing: {walk.carry!r}"
    assert walk.original.skip_blank(walk.line) == len(walk.original.lines), "the end is missing"
    return cuts


def _own_part(walk: _Walk, part: Reading, lines: list[str], index: int) -> _Walk:
    """The walk past one part. A line holding only list markers may be one the part writes
    again (a marker of an item it goes on with) or its first own line (an item with nothing on
    its line yet): each reading is tried, the most marker lines first."""
    if not index:
        _own_lines(walk, part, lines, 0, first=False)
        return walk
    failure: AssertionError | None = None
    for markers in range(_marker_lines(walk, lines), -1, -1):
        attempt = replace(walk)
        try:
            _own_lines(attempt, part, lines, _repeated(attempt, lines, markers), first=True)
        except AssertionError as error:
            failure = failure or error
        else:
            return attempt
    assert failure is not None
    raise failure


def _marker_lines(walk: _Walk, lines: list[str]) -> int:
    """How many of the part's first lines hold only the marker of a list item around it."""
    count = 0
    for _ in range(walk.original.items_around(walk.line, walk.carry is not None)):
        if count < len(lines) - 1 and not bare(lines[count]).strip() and lines[count].strip(" >"):
            count += 1
    return count


def _repeated(walk: _Walk, lines: list[str], markers: int) -> int:
    """Skips the `markers` marker lines and the lines a part starting here writes again;
    returns the first own line."""
    original, at = walk.original, markers
    fence, table = original.open_fence(walk.line), original.open_table(walk.line)
    html = original.open_html(walk.line)
    if fence and fence.map and original.in_fence(walk.line):
        assert bare(lines[at]) == bare(original.lines[fence.map[0]]), lines[at]
        at += 1
    elif html and html.map:
        assert bare(lines[at]) == bare(original.lines[html.map[0]]), lines[at]
        at += 1
    elif table and table.map:
        for header in range(2):
            assert bare(lines[at]) == bare(original.lines[table.map[0] + header]), lines[at]
            at += 1
    return at


def _own_lines(walk: _Walk, part: Reading, lines: list[str], at: int, first: bool) -> None:
    original = walk.original
    for index in range(at, len(lines)):
        line, last = lines[index], index == len(lines) - 1
        fence = original.open_fence(walk.line)
        if walk.carry is None and walk.line == len(original.lines):
            target = None
        else:
            target = walk.carry if walk.carry is not None else original.lines[walk.line]
        mine, theirs = _own_text(line, target or "") if first else (line, target or "")
        if first and walk.carry is not None:  # what is left of a cut line is text, not markers
            mine, theirs = _rest_of_line(line, walk.carry), walk.carry
        if target is not None and mine == theirs:
            _same_blocks(part, index, original, walk.line, line)
            walk.line, walk.carry = walk.line + 1, None
        elif fence and fence.map and bare(line).rstrip() == fence.markup and (
                last or (walk.line == original.end(fence) and not original.closed(fence))):
            pass  # the closing fence of a part that ends inside a code block, or of an open one
        elif target is not None and mine.strip() and theirs.startswith(mine) \
                and _ends_part(lines, index, fence):
            _same_blocks(part, index, original, walk.line, line)
            rest = theirs[len(mine):].lstrip(" \t")
            walk.line, walk.carry = (walk.line, rest) if rest else (walk.line + 1, None)
        else:
            raise AssertionError(f"part line {line!r} is not original line {target!r}")
        first = False


def _own_text(line: str, target: str) -> tuple[str, str]:
    """A part's first line and its original line, each without the quote and list markers and
    blanks before its text (which the part may write anew): the same text after markers if
    there is one, else the longest text after markers in the part's line that starts the
    original's after markers (the piece of a cut line). In a code line markers may be text."""
    mine = [line[at:] for at in range(_markers_length(line) + 1) if _markers_end(line, at)]
    theirs = [target[at:] for at in range(_markers_length(target) + 1) if _markers_end(target, at)]
    for text in mine:
        if text in theirs:
            return text, text
    for text in mine:
        for original in theirs:
            if text.strip() and original.startswith(text):
                return text, original
    return bare(line), bare(target)


def _markers_length(line: str) -> int:
    match = _MARKERS.match(line)
    return match.end() if match else 0


def _markers_end(line: str, at: int) -> bool:
    """Whether line[:at] is quote and list markers and blanks that end there."""
    return bool(_MARKERS.fullmatch(line[:at])) and (at in (0, len(line)) or line[at - 1] in " \t>")


def _rest_of_line(line: str, carry: str) -> str:
    """The piece of a cut line that `line` holds after what the part wrote before it: quote and
    list markers, blanks, and a heading's `#` marker or an indented code block's indentation."""
    for at in range(len(line)):
        if _WRITTEN_BEFORE.fullmatch(line[:at]) and line[at:].strip() and carry.startswith(line[at:]):
            return line[at:]
    return line


def _ends_part(lines: list[str], index: int, fence: Token | None) -> bool:
    rest = lines[index + 1:]
    return not rest or (len(rest) == 1 and fence is not None and bare(rest[0]).rstrip() == fence.markup)


def _same_blocks(part: Reading, index: int, original: Reading, line: int, text: str) -> None:
    if not bare(text).strip():
        return
    mine, theirs = part.shape(index), original.shape(line)
    assert mine == theirs, (text, mine, theirs)


def assert_cuts_inside_only_big_blocks(original: str, cuts: list[tuple[int, bool]], limit: int) -> None:
    reading = Reading(original)
    for line, inside_line in cuts:
        for block in reading.covering(line):
            if block.type in _TABLE_INSIDES:
                continue
            first, end = block.map or (0, 0)
            if first < line or inside_line:
                while end - 1 > first and reading.blank(end - 1):
                    end -= 1
                text = "\n".join(reading.lines[first:end])
                extra = MARKER_ALLOWANCE * reading.items_around(first, False)
                extra += sum(len(f.markup) + MARKER_ALLOWANCE for f in reading.fences()  # closing
                             if f.map and first <= f.map[0] < end and not reading.closed(f))  # lines added
                assert len(text) + extra > limit, (
                    f"cut at line {line} inside a {block.type} of {len(text)} characters")
