"""What a message's files become (pure, no network): the kind from the bytes, the caps, the
fence, the content parts and what the thread is told."""

from __future__ import annotations

import base64

import pytest

from core.attachments import (
    INLINE_CHARS,
    FileOffer,
    Limits,
    Skipped,
    StoredFile,
    classify,
    content,
    fenced,
    safe_name,
    skipped_notice,
    take,
)
from tests.files import GIF, JPEG, PNG, WEBP, pdf


@pytest.mark.parametrize(("name", "declared", "data", "mime"), [
    ("a.png", "image/png", PNG, "image/png"),
    ("screenshot", "image/png", PNG, "image/png"),  # a pasted image has no extension
    ("photo.jpg", None, JPEG, "image/jpeg"),
    ("a.gif", "image/gif", GIF, "image/gif"),
    ("a.webp", "image/webp", WEBP, "image/webp"),
    ("wrong.jpg", "image/jpeg", PNG, "image/png"),  # the bytes say what it is
])
def test_images_are_known_by_their_bytes(name: str, declared: str | None, data: bytes,
                                         mime: str) -> None:
    read = classify(name, declared, data)
    assert isinstance(read, StoredFile) and read.mime_type == mime and read.is_image


@pytest.mark.parametrize(("name", "declared", "data", "reason"), [
    ("evil.png", "image/png", b"#!/bin/sh\nrm -rf /\n", "named as an image"),
    ("notes.txt", "text/plain", PNG, "do not say it is an image"),
    ("fake.pdf", "application/pdf", b"hello", "named as a PDF"),
    ("tool.exe", "application/octet-stream", b"MZ\x90\x00", "not supported"),
    ("song.mp3", "audio/mpeg", b"ID3\x03", "not supported"),
    ("latin.txt", "text/plain", "café".encode("latin-1"), "not readable text"),
    ("nul.log", None, b"a\x00b", "not readable text"),
    ("empty.txt", "text/plain", b"", "empty"),
    ("broken.pdf", "application/pdf", b"%PDF-1.4 nothing else", "could not be read"),
])
def test_what_is_skipped_and_why(name: str, declared: str | None, data: bytes, reason: str) -> None:
    read = classify(name, declared, data)
    assert isinstance(read, Skipped) and reason in read.reason


@pytest.mark.parametrize(("name", "declared"), [
    ("notes.md", None), ("data.csv", "text/csv"), ("app.py", "text/x-python"),
    ("conf.json", "application/json"), ("server.log", "application/octet-stream"),
    ("Dockerfile", None), ("plain", "text/plain"),
])
def test_text_like_files_are_read_as_text(name: str, declared: str | None) -> None:
    read = classify(name, declared, "ünïcode ✓\nline 2".encode())
    assert isinstance(read, StoredFile) and read.text == "ünïcode ✓\nline 2"


def test_a_pdf_is_its_text() -> None:
    read = classify("report.pdf", "application/pdf", pdf("Quarterly revenue"))
    assert isinstance(read, StoredFile) and read.mime_type == "application/pdf"
    assert read.text is not None and "Quarterly revenue" in read.text


def test_a_fence_holds_whatever_the_file_says() -> None:
    text = "before\n```\nnot the end\n````\nafter"
    block = fenced("x.md", text)
    lines = block.split("\n")
    assert lines[0] == "File: x.md" and lines[1] == "`````" and lines[-1] == "`````"
    assert "\n".join(lines[2:-1]) == text


def test_a_long_file_is_cut_and_says_so() -> None:
    block = fenced("big.log", "x" * (INLINE_CHARS + 10))
    assert "[… cut: 10 more characters]" in block and block.count("x") == INLINE_CHARS


def test_names_are_cleaned() -> None:
    assert safe_name("../../etc/passwd") == "passwd"
    assert safe_name("C:\\Users\\me\\a\x00b\r\n.txt") == "a\ufffdb .txt"
    assert safe_name("\u202e...") == "file"
    assert len(safe_name("a" * 500)) == 200


def test_content_parts_of_text_and_files() -> None:
    files = [StoredFile("a.png", "image/png", PNG), StoredFile("n.txt", "text/plain", b"hi", "hi")]
    assert content("plain", []) == "plain"
    parts = content("Look:", files)
    assert parts == [
        {"type": "text", "text": "Look:\n\nFile: n.txt\n```\nhi\n```"},
        {"type": "image_url", "image_url": {
            "url": "data:image/png;base64," + base64.b64encode(PNG).decode()}},
    ]


def offer(name: str, data: bytes, size: int | None = None, declared: str | None = None) -> FileOffer:
    async def download(limit: int) -> bytes:
        return data[:limit]
    return FileOffer(name, declared, len(data) if size is None else size, download)


async def test_caps_per_file_and_per_message() -> None:
    async def broken(limit: int) -> bytes:
        raise OSError("connection reset")

    offers = [offer("a.txt", b"one"), offer("big.txt", b"x" * 11, declared="text/plain"),
              offer("liar.txt", b"y" * 11, size=2), FileOffer("gone.txt", None, 1, broken),
              offer("b.txt", b"two"), offer("c.txt", b"three")]
    intake = await take(offers, Limits(max_bytes=10, per_message=5))
    assert [f.name for f in intake.files] == ["a.txt", "b.txt"]
    assert [(s.name, s.reason) for s in intake.skipped] == [
        ("big.txt", "it is larger than 10 bytes"), ("liar.txt", "it is larger than 10 bytes"),
        ("gone.txt", "it could not be downloaded"),
        ("c.txt", "only 5 files of a message are read"),
    ]
    assert skipped_notice(intake.skipped).splitlines()[:2] == [  # type: ignore[union-attr]
        "I did not read these files:", "• big.txt: it is larger than 10 bytes"]
    assert skipped_notice(()) is None


async def test_no_file_is_read_when_none_may_be() -> None:
    intake = await take([offer("a.txt", b"one")], Limits(per_message=0))
    assert intake.files == () and intake.skipped == (Skipped("a.txt", "files are not read here"),)
