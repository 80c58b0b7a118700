"""What a message gives the agent and what the thread is told first (no network, no database)."""

from __future__ import annotations

from core.attachments import FileOffer, Limits
from core.conversation.refusals import NO_WORDS
from core.conversation.written import read
from tests.files import PNG


def offer(name: str, data: bytes) -> FileOffer:
    async def download(limit: int) -> bytes:
        return data[:limit]
    return FileOffer(name, None, len(data), download)


async def test_words_alone_go_as_they_are() -> None:
    said = await read("  hello  ", [], Limits())
    assert (said.text, said.files, said.notices) == ("hello", (), ())


async def test_a_file_read_without_words_is_a_turn_named_by_it() -> None:
    said = await read("", [offer("a.png", PNG)], Limits())
    assert said.text == "📎 a.png" and [f.name for f in said.files] == ["a.png"]
    assert said.notices == ()


async def test_a_skipped_file_is_named_and_the_words_still_go() -> None:
    said = await read("look", [offer("a.png", PNG), offer("b.zip", b"PK\x03\x04")],
                      Limits(per_message=10))
    assert said.text == "look" and [f.name for f in said.files] == ["a.png"]
    assert said.notices == ("I did not read this file:\n• b.zip: this type of file is not "
                            "supported (only images (PNG, JPEG, GIF, WebP), text, Markdown, "
                            "code, CSV, JSON, logs and PDFs)",)


async def test_nothing_readable_runs_nothing_and_says_what_is_read() -> None:
    said = await read("", [offer("b.zip", b"PK\x03\x04")], Limits())
    assert said.text == "" and said.notices[-1] == NO_WORDS and len(said.notices) == 2
    assert (await read("", [], Limits())).notices == (NO_WORDS,)
