"""The block structure of a Markdown text, as markdown-it-py (CommonMark, plus GFM tables) reads
it: its blocks with their source lines, and the quotes and list items around each.

markdown-it's tokens carry line ranges (`token.map`) but no columns, so where a line's own text
starts inside its quotes and list items is read here with the two container rules of CommonMark
that decide it: a quote's `>` (up to three spaces before it, one space after it), and a list
item's content column, which its first line sets. Everything else (which lines form a block,
where a fence ends, what a list item's marker is) comes from the parser.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from markdown_it import MarkdownIt
from markdown_it.token import Token
from markdown_it.tree import SyntaxTreeNode

_QUOTE_MARKER = re.compile(r" {0,3}>[ \t]?")
_TAB = 4
# Blocks that hold other blocks: a part that starts inside one carries its markers again.
CONTAINERS = frozenset({"blockquote", "bullet_list", "ordered_list", "list_item"})


@cache
def parser() -> MarkdownIt:
    """CommonMark with GFM tables: the block syntax the agents' answers use (block rules only:
    no cut depends on the inline ones, and each split parses many times)."""
    return MarkdownIt("commonmark").enable("table").disable("inline")


@dataclass(frozen=True, slots=True)
class Container:
    """A block quote or a list item around a block, and how its lines begin."""

    start: int  # its first line
    marker: str = ""  # a list item's marker as written, with the spaces before it ("1.", "  -")
    width: int = 0  # columns from the enclosing content to a list item's content

    @property
    def is_quote(self) -> bool:
        return not self.marker

    def continuation(self) -> str:
        """What starts a line that goes on inside this container."""
        return "> " if self.is_quote else " " * self.width


Chain = tuple[Container, ...]


@dataclass(frozen=True, slots=True)
class Block:
    """A block of the document: its kind (a token type: `paragraph`, `fence`, `list_item`, ...;
    `lines` for lines no token covers, such as link reference definitions) and its lines."""

    kind: str
    start: int
    end: int  # one past its last line
    node: SyntaxTreeNode | None = None

    @property
    def is_container(self) -> bool:
        return self.kind in CONTAINERS


class Document:
    """A Markdown text split into lines, with the blocks the parser found in it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.split("\n")
        self.offsets = [0]
        for line in self.lines:
            self.offsets.append(self.offsets[-1] + len(line) + 1)
        self.tokens = parser().parse(text)
        self.root = SyntaxTreeNode(self.tokens)

    def line_end(self, index: int) -> int:
        return self.offsets[index] + len(self.lines[index])

    def line_of(self, offset: int) -> int:
        """The line that the character at `offset` is on (a line's end is on it)."""
        return bisect_right(self.offsets, offset) - 1

    def blocks(self) -> list[Block]:
        """The top-level blocks."""
        return self.children(None, ())

    def children(self, parent: Block | None, chain: Chain) -> list[Block]:
        """The blocks inside `parent` (the document if None), with the lines none of them covers
        that hold text (link reference definitions) as blocks of their own."""
        nodes = parent.node.children if parent and parent.node else self.root.children
        start, end = (parent.start, parent.end) if parent else (0, len(self.lines))
        found: list[Block] = []
        for node in nodes:
            first, last = node.map or (start, start)
            found += self._gap(start, first, chain)
            found.append(Block(node.type, first, last, node))
            start = max(start, last)
        return found + self._gap(start, end, chain)

    def _gap(self, start: int, end: int, chain: Chain) -> list[Block]:
        texts = [n for n in range(start, end) if self.content(n, chain).strip()]
        return [Block("lines", texts[0], texts[-1] + 1)] if texts else []

    def last_line(self, block: Block, chain: Chain) -> int:
        """The block's last line that is not blank inside it (list items own the blank lines
        after them, quotes their lines holding only `>`)."""
        inner, last = self.inner_chain(block, chain), block.end - 1
        while last > block.start and not self.content(last, inner).strip():
            last -= 1
        return last

    def inner_chain(self, block: Block, chain: Chain) -> Chain:
        """The containers around `block`'s children."""
        if block.kind == "blockquote":
            return (*chain, Container(block.start))
        if block.kind == "list_item" and block.node is not None:
            return (*chain, self._item(block, chain))
        return chain

    def _item(self, block: Block, chain: Chain) -> Container:
        assert block.node is not None
        line = self.lines[block.start]
        at = self.content_offset(block.start, chain)
        lead = len(line[at:]) - len(line[at:].lstrip(" "))
        marker = line[at:at + lead + len(block.node.info) + len(block.node.markup)]
        rest = line[at + len(marker):]
        gap = _columns(rest)
        # CommonMark: one to four spaces after the marker set the content column; more (an
        # indented code block) or none (a blank first line) count as one.
        if not rest.strip() or gap > 4:
            gap = 1
        return Container(block.start, marker, len(marker) + gap)

    def content_offset(self, index: int, chain: Chain) -> int:
        """Where line `index`'s own text starts once its containers' markers are read off; a line
        a quote does not mark is a lazy continuation, of which nothing more is read off."""
        line, at = self.lines[index], 0
        for container in chain:
            if container.is_quote:
                match = _QUOTE_MARKER.match(line, at)
                if match is None:
                    return at
                at = match.end()
            elif index == container.start:
                at = _skip_blank(line, at + len(container.marker), container.width - len(container.marker))
            else:
                at = _skip_blank(line, at, container.width)
        return at

    def content(self, index: int, chain: Chain) -> str:
        return self.lines[index][self.content_offset(index, chain):]

    def walk(self) -> Iterator[tuple[Block, Chain]]:
        """Every block with the containers around it, in document order."""
        yield from self._walk(self.blocks(), ())

    def _walk(self, blocks: list[Block], chain: Chain) -> Iterator[tuple[Block, Chain]]:
        for block in blocks:
            yield block, chain
            if block.is_container:
                inner = self.inner_chain(block, chain)
                yield from self._walk(self.children(block, inner), inner)


def _columns(text: str) -> int:
    """The columns its leading blanks span (a tab reaches the next multiple of four)."""
    columns = 0
    for char in text:
        if char == " ":
            columns += 1
        elif char == "\t":
            columns += _TAB - columns % _TAB
        else:
            break
    return columns


def _skip_blank(line: str, at: int, columns: int) -> int:
    while columns > 0 and at < len(line) and line[at] in " \t":
        columns -= 1 if line[at] == " " else _TAB
        at += 1
    return at


def fence_is_closed(node: SyntaxTreeNode | Token) -> bool:
    """Whether the fence has a closing line: the parser's content has every line of its range
    but the opening one, and the closing one when there is one."""
    first, end = node.map or (0, 0)
    content = node.content
    lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    return end - first - 2 == lines


def close_fences(document: Document) -> Document:
    """The document with a closing line added to each fence that has none, after its last line
    that is not blank (CommonMark closes it at the end of its container or of the document,
    blank lines included; chat platforms do not)."""
    closings = [(document.last_line(block, chain) + 1, "".join(c.continuation() for c in chain) + block.node.markup)
                for block, chain in document.walk()
                if block.kind == "fence" and block.node is not None and not fence_is_closed(block.node)]
    if not closings:
        return document
    lines = list(document.lines)
    for at, closing in reversed(closings):
        lines.insert(at, closing)
    return Document("\n".join(lines))


def shape(tokens: list[Token], line: int) -> tuple[str, ...]:
    """The blocks the parser put line `line` in, outermost first (`bullet_list`, `list_item`,
    `paragraph`): two readings of a line agree when they give it the same shape."""
    return tuple(token.type.removesuffix("_open") for token in tokens
                 if token.nesting >= 0 and token.type != "inline" and token.map
                 and token.map[0] <= line < token.map[1])
