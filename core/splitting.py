"""Split long Markdown into parts within a platform's limit, on paragraph and code-fence
boundaries; a code block cut in two is closed at the end of one part and reopened (with its
language) at the start of the next, so every part renders on its own."""

from __future__ import annotations

import re

_FENCE = re.compile(r"^(\s{0,3})(`{3,}|~{3,})(.*)$")


def split_markdown(text: str, limit: int) -> list[str]:
    """Parts of at most `limit` characters that join back to the same document."""
    if limit < 40:
        raise ValueError("a limit under 40 characters cannot hold a code fence")
    parts: list[str] = []
    current = ""
    for block in _blocks(text):
        for piece in _fit(block, limit):
            joined = f"{current}\n\n{piece}" if current else piece
            if len(joined) <= limit:
                current = joined
            else:
                parts.append(current)
                current = piece
    if current:
        parts.append(current)
    return parts or [""]


def _blocks(text: str) -> list[str]:
    """Paragraphs and whole fenced code blocks, in order."""
    blocks: list[str] = []
    lines: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        match = _FENCE.match(line)
        if fence is None and match:
            if lines:
                blocks.append("\n".join(lines))
            lines, fence = [line], match.group(2)[0] * 3
        elif fence is not None:
            lines.append(line)
            if match and match.group(2).startswith(fence) and not match.group(3).strip():
                blocks.append("\n".join(lines))
                lines, fence = [], None
        elif not line.strip():
            if lines:
                blocks.append("\n".join(lines))
            lines = []
        else:
            lines.append(line)
    if lines:
        if fence is not None:  # an unclosed fence: close it so the part renders
            lines.append(fence)
        blocks.append("\n".join(lines))
    return blocks


def _fit(block: str, limit: int) -> list[str]:
    if len(block) <= limit:
        return [block]
    first = block.split("\n", 1)[0]
    if _FENCE.match(first):
        return _split_code(block, limit)
    return _split_prose(block, limit)


def _split_code(block: str, limit: int) -> list[str]:
    lines = block.split("\n")
    opening, body = lines[0], lines[1:-1]
    closing = _FENCE.match(opening).group(2)  # type: ignore[union-attr]
    room = limit - len(opening) - len(closing) - 2
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for line in _hard_wrap(body, room):
        if current and size + len(line) + 1 > room:
            chunks.append("\n".join([opening, *current, closing]))
            current, size = [], 0
        current.append(line)
        size += len(line) + 1
    chunks.append("\n".join([opening, *current, closing]))
    return chunks


def _split_prose(block: str, limit: int) -> list[str]:
    pieces: list[str] = []
    current = ""
    for word in _words(block):
        if len(current) + len(word) > limit and current:
            pieces.append(current.rstrip())
            current = ""
        while len(word) > limit:  # one "word" longer than a part: cut it
            cut = _cut_point(word, limit)
            pieces.append(word[:cut])
            word = word[cut:]
        current += word
    if current.strip():
        pieces.append(current.rstrip())
    return pieces


def _words(block: str) -> list[str]:
    """Words with their trailing space; one that looks like a fence stays with the word
    before it, so no part starts with a line that would open a code block."""
    words: list[str] = []
    for word in re.split(r"(?<=\n)|(?<= )", block):
        if words and _fence_like(word):
            words[-1] += word
        elif word:
            words.append(word)
    return words


def _hard_wrap(lines: list[str], width: int) -> list[str]:
    out: list[str] = []
    for line in lines:
        while len(line) > width:
            cut = _cut_point(line, width)
            out.append(line[:cut])
            line = line[cut:]
        out.append(line)
    return out


def _cut_point(text: str, width: int) -> int:
    cut = width
    while cut > 1 and _fence_like(text[cut:]):
        cut -= 1  # the rest must not start like a fence and open or close a block
    return cut


def _fence_like(text: str) -> bool:
    return text.lstrip()[:3] in ("```", "~~~")
