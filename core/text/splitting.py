"""Split long Markdown into parts within a platform's limit, on the block structure that a
CommonMark parser finds (`core.text.markdown_blocks`), so that every part renders on its own.

A part ends between top-level blocks. It ends inside a block only when that block alone is over
the limit: between the block's children (a list's items, a quote's paragraphs), or, in a leaf
block, between its lines (a code block's lines, a table's rows, a paragraph's lines), or inside
a line only when that line alone is over. A part that starts inside a block writes again what
the parser needs to read it as before: the marker of each list item it goes on with (on the
first line, or on a line of its own where the text after it starts with blanks), the opening
fence of the code block it goes on with (same characters, same length, same info string), the
header of the table it goes on with, the first line of the HTML block it goes on with; a part
that ends inside a code block closes it with a fence of the same characters and length. Where
a cut could change how the parser reads either side (the rest of a paragraph starting `2. ` or
`<b>`, a code line reading as a closing fence), the parser is asked and the cut moves. Blanks
at a cut are dropped.

Where a part has no room for what it would have to write again (nesting too deep for the
limit, a fence's opening line longer than it), the block is cut as plain text within the limit.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, replace

from core.text.markdown_blocks import Block, Chain, Document, close_fences, fence_is_closed, parser, shape

MIN_LIMIT = 40
_CUT_TRIES = 32  # places asked of the parser for one cut before taking the first that fits
# The first lines of a leaf that a part starting inside it writes again, so that the parser
# reads the rest as before: a fence's opening line, a table's header and delimiter rows, an
# HTML block's first line (which decides where it ends; the rest alone could read as a list).
_REPEATED = {"fence": 1, "table": 2, "html_block": 1}


@dataclass(frozen=True, slots=True)
class _Atom:
    """A stretch of the text no part is cut inside, and what a part that starts or ends with
    it adds: `head` before `text[start:]`, `tail` after `text[:end]`."""

    start: int
    end: int
    line: int  # the line it starts on
    head: str = ""
    tail: str = ""


def split_markdown(text: str, limit: int) -> list[str]:
    """Parts of at most `limit` characters, cut where the Markdown's blocks allow (see the
    module's docstring), with line ends made `\\n` and a closing fence added to any fence
    left open; an empty text is one empty part."""
    if limit < MIN_LIMIT:
        raise ValueError(f"a limit under {MIN_LIMIT} characters cannot hold a code fence")
    document = close_fences(Document(text.replace("\r\n", "\n").replace("\r", "\n")))
    return _Splitter(document, limit).parts() or [""]


Range = tuple[int, int]  # the first and last atom of a run


class _Splitter:
    """One split: the atoms of the document's blocks (whole blocks where they fit, else their
    children's or their lines' atoms), then parts as runs of atoms joined while they fit."""

    def __init__(self, document: Document, limit: int) -> None:
        self.doc = document
        self.limit = limit
        self.atoms: list[_Atom] = []

    def parts(self) -> list[str]:
        ranges = [piece for block in self.doc.blocks() for piece in self._pieces(block, ())]
        return [self._render(first, last) for first, last in self._pack(ranges)]

    # -- pieces: runs of atoms that each fit, joined while they fit ----------------------------

    def _pieces(self, block: Block, chain: Chain) -> list[Range]:
        whole = self._whole(block, chain)
        if self._length(whole, whole) <= self.limit:
            return [self._add([whole])]
        if block.is_container:
            inner = self.doc.inner_chain(block, chain)
            return self._pack([piece for child in self.doc.children(block, inner)
                               for piece in self._pieces(child, inner)])
        atoms = self._paragraph(block, chain) if block.kind == "paragraph" else self._leaf(block, chain)
        return self._pack([(n, n) for n in atoms])

    def _whole(self, block: Block, chain: Chain) -> _Atom:
        doc, line = self.doc, block.start
        end = doc.line_end(doc.last_line(block, chain))
        if not any(not c.is_quote and c.start < line for c in chain):
            return _Atom(doc.offsets[line], end, line)
        own = doc.offsets[line] + doc.content_offset(line, chain)
        opening = _opening(chain, doc.text[own:end])
        if opening is None:
            return _Atom(doc.offsets[line], end, line, self._markers(chain, line))
        return _Atom(own, end, line, opening)

    def _add(self, atoms: list[_Atom]) -> Range:
        self.atoms += atoms
        return len(self.atoms) - len(atoms), len(self.atoms) - 1

    def _pack(self, ranges: list[Range]) -> list[Range]:
        """Neighbouring ranges joined while they fit. (A part never ends with just a fence's
        opening line or a table's header: the atom after them is sized with a head that
        writes them again, so it always fits after them.)"""
        pieces: list[Range] = []
        for first, last in ranges:
            if pieces and self._fits(pieces[-1][0], last):
                pieces[-1] = (pieces[-1][0], last)
            else:
                pieces.append((first, last))
        return pieces

    # -- a paragraph over the limit: pieces that each fit alone, cut where the parser agrees --

    def _paragraph(self, block: Block, chain: Chain) -> range:
        doc, whole = self.doc, self._whole(block, chain)
        head = self._head(block, chain, [], "x")  # a piece after the first starts with no blank
        if max(len(head), len(whole.head)) >= self.limit:
            return self._raw(block, chain)
        atoms: list[_Atom] = []
        atom = whole
        while self._length(atom, atom) > self.limit:
            end, start = self._paragraph_cut(atom, head, chain)
            atoms.append(replace(atom, end=end))
            atom = _Atom(start, whole.end, doc.line_of(start), head)
        begin, _ = self._add([*atoms, atom])
        return range(begin, len(self.atoms))

    def _paragraph_cut(self, atom: _Atom, head: str, chain: Chain) -> tuple[int, int]:
        """Where the piece of a paragraph from `atom.start` ends and the next begins: the first
        of the places `_paragraph_cuts` offers where the parser reads both sides as the text
        does (the rest must not start a list, a heading or an HTML block; a piece that ends
        inside a line must not end with a heading's underline), else the first one."""
        doc, found = self.doc, None
        for end, start in itertools.islice(self._paragraph_cuts(atom, head, chain), _CUT_TRIES):
            found = found or (end, start)
            line = doc.line_of(start)
            if not self._reads(head, start, doc.line_end(line), line):
                continue
            below = doc.text.count("\n", atom.start, end)
            if doc.line_of(end) != line or self._reads(atom.head, atom.start, end, line, below):
                return end, start
        cut = atom.start + self.limit - len(atom.head)
        return found or (cut, cut)

    def _paragraph_cuts(self, atom: _Atom, head: str, chain: Chain) -> Iterator[tuple[int, int]]:
        """(where a piece ends, where the next starts), best first, for a piece that fits: the
        ends of lines, then places inside them; inside first where the line the piece cannot
        hold is over a part even alone (it is cut anyway: the piece fills up with it)."""
        doc = self.doc
        last = atom.start + self.limit - len(atom.head)  # a piece may end up to here
        line = doc.line_of(last)
        own = doc.offsets[line] + doc.content_offset(line, chain)
        ends, inside = self._line_ends(atom, last, chain), self._inside_lines(atom, last)
        if line > atom.line and len(head) + doc.line_end(line) - own > self.limit:
            return itertools.chain(inside, ends)
        return itertools.chain(ends, inside)

    def _line_ends(self, atom: _Atom, last: int, chain: Chain) -> Iterator[tuple[int, int]]:
        doc = self.doc
        for line in range(doc.line_of(last), atom.line - 1, -1):
            end = doc.line_end(line)
            if atom.start < end <= last:
                start = doc.offsets[line + 1] + doc.content_offset(line + 1, chain)
                yield end, _skip_blanks(doc.text, start, atom.end)

    def _inside_lines(self, atom: _Atom, last: int) -> Iterator[tuple[int, int]]:
        doc, text = self.doc, self.doc.text
        for at in _places(text, atom.start, last):
            end, start = atom.start + len(text[atom.start:at].rstrip()), _skip_blanks(text, at, atom.end)
            if atom.start < end and start < atom.end and doc.line_of(end) == doc.line_of(start):
                yield end, start

    # -- the atoms of another leaf block over the limit: its lines, pieces of long lines -------

    def _leaf(self, block: Block, chain: Chain) -> range:
        doc = self.doc
        repeated = [doc.content(block.start + n, chain) for n in range(_REPEATED.get(block.kind, 0))]
        last, tail, closing = self._ending(block, chain)
        # The rest of a heading's or an indented code block's line cut inside it says again
        # what it is in.
        again = {"heading": f"{block.node.markup} " if block.node else "", "code_block": "    "}.get(
            block.kind, "")
        # The head of a fence's or a table's lines is always the same; other lines may start
        # with blanks, where the markers go on lines of their own.
        widest = self._head(block, chain, repeated, "x") if repeated else self._longest_head(chain)
        ending = max(len(tail), len(closing))
        room = self.limit - len(widest) - len(again) - ending
        first = replace(self._whole(block, chain), end=doc.line_end(block.start), tail=tail)
        if room < 1 or (repeated and self._length(first, first) - len(tail) + ending > self.limit):
            return self._raw(block, chain)
        head = self._head(block, chain, repeated, "x") + again  # before a piece of a line
        atoms: list[_Atom] = []
        for line in range(block.start, last + 1):
            if doc.content(line, chain).strip():  # blank (code) lines are no atoms: dropped at a cut
                atom = first if line == block.start else self._line(block, chain, line, repeated, tail)
                atoms += self._cut(atom, self.limit - len(atom.head) - ending, head, room, True)
        atoms[-1] = replace(atoms[-1], tail=closing)
        begin, _ = self._add(atoms)
        return range(begin, len(self.atoms))

    def _ending(self, block: Block, chain: Chain) -> tuple[int, str, str]:
        """The block's last line with atoms of its own, and what a part adds that ends inside
        the block before it, and at it: for a fence, a closing fence, and the rest of the
        fence as written (its closing line, and the blank lines of code before it: no part
        starts or ends with them alone)."""
        doc, last = self.doc, self.doc.last_line(block, chain)
        if block.kind != "fence" or block.node is None:
            return last, "", ""
        code = last - 1
        while code > block.start and not doc.content(code, chain).strip():
            code -= 1
        return code, f"\n{_prefix(chain)}{block.node.markup}", doc.text[doc.line_end(code):doc.line_end(last)]

    def _line(self, block: Block, chain: Chain, line: int, repeated: list[str], tail: str) -> _Atom:
        doc = self.doc
        start, end = doc.offsets[line] + doc.content_offset(line, chain), doc.line_end(line)
        if line < block.start + len(repeated):  # a line parts write again (a table's delimiter)
            return _Atom(start, end, line, "", tail)
        return _Atom(start, end, line, self._head(block, chain, repeated, doc.text[start:end]), tail)

    def _cut(self, atom: _Atom, budget: int, head: str, room: int, check: bool) -> list[_Atom]:
        """`atom` cut where it is over `budget`; the pieces after the first start with `head`
        and fit in `room`."""
        pieces, start = [atom], atom.start
        while atom.end - start > budget:
            end, start = self._cut_point(pieces[-1], start + budget, head, check)
            pieces[-1] = replace(pieces[-1], end=end)
            if start == atom.end:
                break
            pieces.append(replace(atom, start=start, head=head))
            budget = room
        return pieces

    def _cut_point(self, piece: _Atom, cut: int, head: str, check: bool) -> tuple[int, int]:
        """Where `piece` ends (at most at `cut`) and where the next piece starts: at the last
        blank, else anywhere, where both pieces read as the line did (a code line not as the
        fence's closing line, a heading's rest not as something else)."""
        text, start, found = self.doc.text, piece.start, None
        for at in itertools.islice(_places(text, start, cut), _CUT_TRIES):
            end, after = start + len(text[start:at].rstrip()), _skip_blanks(text, at, piece.end)
            if end == start:
                continue
            found = found or (end, after)
            if not check or (self._reads(piece.head, start, end, piece.line) and (
                    after == piece.end or self._reads(head, after, piece.end, piece.line))):
                return end, after
        return found or (cut, cut)

    def _raw(self, block: Block, chain: Chain) -> range:
        """The block cut as plain text (its first piece still in its containers), where no
        part has room for what a part inside it would have to write again."""
        whole = self._whole(block, chain)
        begin, _ = self._add(self._cut(whole, self.limit - len(whole.head), "", self.limit, False))
        return range(begin, len(self.atoms))

    # -- what a part writes again where it starts inside a block -------------------------------

    def _head(self, block: Block, chain: Chain, repeated: list[str], own: str) -> str:
        """What a part that starts inside a leaf writes before `own`, its first text: the
        containers' markers, then the lines it repeats (an opening fence, a table header)."""
        prefix = _prefix(chain)
        opening = _opening(chain, (repeated or [own])[0])
        if opening is not None:
            return opening + "".join(f"{line}\n{prefix}" for line in repeated)
        if repeated:  # the lines as written, after the markers of the items they are not on
            lines = self.doc.lines[block.start:block.start + len(repeated)]
            return self._markers(chain, block.start) + "".join(f"{line}\n" for line in lines) + prefix
        return self._longest_head(chain)

    def _longest_head(self, chain: Chain) -> str:
        return self._markers(chain, len(self.doc.lines)) + _prefix(chain)

    def _markers(self, chain: Chain, line: int) -> str:
        """A line with the marker of each list item around `line` that started before it."""
        return "".join(f"{_prefix(chain[:n])}{c.marker}\n" for n, c in enumerate(chain)
                       if not c.is_quote and c.start < line)

    # -- lengths and checks --------------------------------------------------------------------

    def _length(self, first: _Atom, last: _Atom) -> int:
        return len(first.head) + last.end - first.start + len(last.tail)

    def _fits(self, first: int, last: int) -> bool:
        return self._length(self.atoms[first], self.atoms[last]) <= self.limit

    def _reads(self, head: str, start: int, end: int, line: int, below: int = 0) -> bool:
        """Whether a part that starts with `head` and text[start:end] reads its line `below`
        (of that text) as the whole text reads `line`: in the same blocks (a paragraph's line
        must not become a list item), and, in a code block, as code (not as its closing fence)."""
        tokens = parser().parse(head + self.doc.text[start:end])
        at = head.count("\n") + below
        if shape(tokens, at) != shape(self.doc.tokens, line):
            return False
        fence = next((t for t in tokens if t.type == "fence" and t.map and t.map[0] < at < t.map[1]), None)
        return fence is None or not fence_is_closed(fence)

    def _render(self, first: int, last: int) -> str:
        head, tail = self.atoms[first].head, self.atoms[last].tail
        return head + self.doc.text[self.atoms[first].start:self.atoms[last].end] + tail


def _opening(chain: Chain, text: str) -> str | None:
    """The markers that put `text` on one line inside `chain`, each list item's on that line
    (`- > 1. text`), when CommonMark gives every item its width again that way and reads the
    text's indentation as before: only when what follows each item's marker, and the text,
    start with no blank (a tab's width depends on its column); None otherwise."""
    markers = ["> " if c.is_quote else c.marker.ljust(c.width) for c in chain]
    if text[:1] in (" ", "\t"):
        return None
    for container, after in zip(chain, [*markers[1:], text], strict=False):
        if not container.is_quote and after[:1] in ("", " ", "\t"):
            return None
    return "".join(markers)


def _prefix(chain: Chain) -> str:
    return "".join(container.continuation() for container in chain)


def _places(text: str, start: int, cut: int) -> Iterator[int]:
    """Where a piece of text[start:] may end, best first: the blanks before `cut`, from the
    last, then every character from `cut` back."""
    at = cut + 1
    while (at := max(text.rfind(blank, start + 1, at) for blank in " \t\n")) > start:
        yield at
    yield from range(cut, start, -1)


def _skip_blanks(text: str, start: int, end: int) -> int:
    while start < end and text[start] in " \t\n":
        start += 1
    return start
