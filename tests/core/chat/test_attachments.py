"""What a message's files become: the kind from the bytes (pure), the text read in real worker
processes within the time and page caps, what is kept of it, the declared MIME type made
safe, the caps, the fence, the content parts and what the thread is told."""

from __future__ import annotations

import base64
import multiprocessing
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from core.chat.attachments import (
    BASE64_SLICE,
    DEFAULT_LIMITS,
    INLINE_CHARS,
    MIME_CHARS,
    FileOffer,
    FileReader,
    Limits,
    Skipped,
    StoredFile,
    content,
    data_url,
    fenced,
    kind_of,
    kept,
    media_type,
    safe_name,
    skipped_notice,
)
from core.chat.attachment_store import AgentFile
from core.edge.workers import WorkerPool
from tests.files import GIF, JPEG, PNG, WEBP, many_pages_pdf, pdf, shared_stream_pdf
from tests.loop_lag import LoopLag

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
async def workers() -> AsyncIterator[WorkerPool]:
    async with WorkerPool(workers=1) as pool:
        yield pool


async def read_one(workers: WorkerPool, name: str, declared: str | None, data: bytes,
                   limits: Limits = DEFAULT_LIMITS) -> StoredFile | Skipped:
    """One file through the reader, as a message brings it."""
    intake = await FileReader(limits, workers).take([offer(name, data, declared=declared)])
    return (intake.files + intake.skipped)[0]  # type: ignore[operator]


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
    assert kind_of(name, declared, data) == mime


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
async def test_what_is_skipped_and_why(workers: WorkerPool, name: str, declared: str | None,
                                      data: bytes, reason: str) -> None:
    read = await read_one(workers, name, declared, data)
    assert isinstance(read, Skipped) and reason in read.reason


@pytest.mark.parametrize(("name", "declared"), [
    ("notes.md", None), ("data.csv", "text/csv"), ("app.py", "text/x-python"),
    ("conf.json", "application/json"), ("server.log", "application/octet-stream"),
    ("Dockerfile", None), ("plain", "text/plain"),
])
async def test_text_like_files_are_read_as_text(workers: WorkerPool, name: str,
                                                declared: str | None) -> None:
    read = await read_one(workers, name, declared, "ünïcode ✓\nline 2".encode())
    assert isinstance(read, StoredFile) and read.text == "ünïcode ✓\nline 2"


async def test_a_pdf_is_its_text(workers: WorkerPool) -> None:
    read = await read_one(workers, "report.pdf", "application/pdf", pdf("Quarterly revenue"))
    assert isinstance(read, StoredFile) and read.mime_type == "application/pdf"
    assert read.text is not None and "Quarterly revenue" in read.text


def test_a_fence_holds_whatever_the_file_says() -> None:
    text = "before\n```\nnot the end\n````\nafter"
    block = fenced("x.md", text)
    lines = block.split("\n")
    assert lines[0] == "File: x.md" and lines[1] == "`````" and lines[-1] == "`````"
    assert "\n".join(lines[2:-1]) == text


def test_a_long_file_is_cut_and_says_so() -> None:
    text = kept("x" * (INLINE_CHARS + 10))
    assert len(text) <= INLINE_CHARS and text.endswith("\n[… cut: 58 more characters]")
    assert text.count("x") == INLINE_CHARS - 48 and kept(text) == text
    assert fenced("big.log", "x" * (INLINE_CHARS + 10)) == f"File: big.log\n```\n{text}\n```"
    assert kept("a\x00b") == "a\ufffdb"


async def test_what_is_stored_of_a_file_is_what_can_be_sent(workers: WorkerPool) -> None:
    """A 3 MB log keeps its first INLINE_CHARS characters (the cut said), not all of it."""
    read = await read_one(workers, "huge.log", "text/plain", b"0123456789\n" * 300_000)
    assert isinstance(read, StoredFile) and read.size == 3_300_000
    assert read.text is not None and len(read.text) <= INLINE_CHARS
    assert read.text.endswith("more characters]")


def test_names_are_cleaned() -> None:
    assert safe_name("../../etc/passwd") == "passwd"
    assert safe_name("C:\\Users\\me\\a\x00b\r\n.txt") == "a\ufffdb .txt"
    assert safe_name("\u202e...") == "file"
    assert len(safe_name("a" * 500)) == 200


async def test_content_parts_of_text_and_files() -> None:
    files = [AgentFile(1, "a.png", "image/png", len(PNG), None, await data_url("image/png", PNG)),
             AgentFile(2, "n.txt", "text/plain", 2, "hi")]
    assert content("plain", []) == "plain"
    parts = content("Look:", files)
    assert parts == [
        {"type": "text", "text": "Look:\n\nFile: n.txt\n```\nhi\n```"},
        {"type": "image_url", "image_url": {
            "url": "data:image/png;base64," + base64.b64encode(PNG).decode()}},
    ]


@pytest.mark.parametrize("size", [0, 1, BASE64_SLICE - 1, BASE64_SLICE, 2 * BASE64_SLICE + 2])
async def test_a_data_url_made_in_slices_is_the_image_in_base64(size: int) -> None:
    data = bytes(range(256)) * (size // 256) + bytes(size % 256)
    assert await data_url("image/png", data) == "data:image/png;base64," + base64.b64encode(data).decode()


ENCODE_A_BIG_IMAGE = """
import asyncio
from core.chat.attachments import data_url

async def main() -> None:
    image = bytes(60 << 20)
    encoded = asyncio.Event()
    ticks = 0

    async def probe() -> None:  # counts the loop's turns while the image is being encoded
        nonlocal ticks
        while True:
            await asyncio.sleep(0.001)
            if encoded.is_set():
                return
            ticks += 1

    task = asyncio.create_task(probe())
    await asyncio.sleep(0)  # the probe is asleep before the encoding starts
    url = await data_url("image/png", image)
    encoded.set()
    await task
    print(len(url), ticks)

asyncio.run(main())
"""


def test_a_big_image_is_encoded_without_holding_the_loop() -> None:
    """60 MiB in base64 takes over 100 ms of CPU (44 ms for 20 MiB measured here): on the loop,
    nothing else would run meanwhile (0 turns of the probe, seen before the fix); off it, the
    loop goes on turning. Counted, not timed: a loaded machine stretches every pause, but a
    loop held by the encoding cannot turn at all. In a process of its own, away from the
    suite's long-lived loop."""
    done = subprocess.run([sys.executable, "-c", ENCODE_A_BIG_IMAGE], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=True)
    length, ticks = done.stdout.split()
    assert int(length) > 80_000_000
    assert int(ticks) >= 5, ticks


def offer(name: str, data: bytes, size: int | None = None, declared: str | None = None) -> FileOffer:
    async def download(limit: int) -> bytes:
        return data[:limit]
    return FileOffer(name, declared, len(data) if size is None else size, download)


async def test_caps_per_file_and_per_message(workers: WorkerPool) -> None:
    async def broken(limit: int) -> bytes:
        raise OSError("connection reset")

    offers = [offer("a.txt", b"one"), offer("big.txt", b"x" * 11, declared="text/plain"),
              offer("liar.txt", b"y" * 11, size=2), FileOffer("gone.txt", None, 1, broken),
              offer("b.txt", b"two"), offer("c.txt", b"three")]
    intake = await FileReader(Limits(max_bytes=10, per_message=5), workers).take(offers)
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
    intake = await FileReader(Limits(per_message=0)).take([offer("a.txt", b"one")])
    assert intake.files == () and intake.skipped == (Skipped("a.txt", "files are not read here"),)


# --- hostile files (issue 26) -------------------------------------------------------------------

def workers_alive() -> set[int]:
    return {p.pid for p in multiprocessing.active_children() if p.name == "pebble_pool_worker"
            and p.pid is not None}


async def test_a_pdf_that_reads_too_long_is_stopped_and_its_worker_replaced(
        workers: WorkerPool) -> None:
    """40 pages drawing one compressed stream: about 80 s of pypdf. The cap stops it, the
    worker that was reading it is gone, and the next file is read by a new one."""
    await read_one(workers, "warm.txt", None, b"warm")  # the worker is up
    before = workers_alive()
    started = time.monotonic()
    read = await read_one(workers, "bomb.pdf", "application/pdf", shared_stream_pdf(),
                          Limits(parse_seconds=1))
    assert read == Skipped("bomb.pdf", "reading it took more than 1 second")
    assert time.monotonic() - started < 6
    assert before and not before & workers_alive(), "the stuck worker still runs"
    again = await read_one(workers, "report.pdf", None, pdf("After the bomb"))
    assert isinstance(again, StoredFile) and "After the bomb" in (again.text or "")


def imported(module: str) -> bool:
    """In a worker: whether `module` was imported before this job."""
    return module in sys.modules


async def test_a_worker_imports_what_it_reads_with_before_its_first_job() -> None:
    """The time cap counts a job's work, not the import of its library (pypdf took longer than a
    1-second cap to import on a loaded CI machine, at the workers' low priority)."""
    async with WorkerPool(workers=1, preload=("colorsys",)) as preloading:
        assert await preloading.run(imported, "colorsys", seconds=30)
    async with WorkerPool(workers=1) as plain:
        assert not await plain.run(imported, "colorsys", seconds=30)


async def test_a_pdf_of_too_many_pages_is_not_read(workers: WorkerPool) -> None:
    # the page limit, not the time cap (a nice-10 worker waits for a core in a loaded CI run)
    read = await read_one(workers, "pages.pdf", None, many_pages_pdf(20_000), Limits(parse_seconds=120))
    assert read == Skipped("pages.pdf", "it is a PDF of 20000 pages, more than the 300 read")
    fewer = await read_one(workers, "pages.pdf", None, many_pages_pdf(3), Limits(pdf_pages=3))
    assert isinstance(fewer, StoredFile) and "[page 3]\npage" in (fewer.text or "")


async def test_the_loop_never_waits_on_a_file(workers: WorkerPool) -> None:
    """While hostile PDFs and a 20 MiB text file are read, the loop is never held. The cap leaves
    the text file time to be read after the bomb (one worker here, at nice 10: on a loaded
    machine it waits for a core)."""
    reader = FileReader(Limits(parse_seconds=3), workers)
    files = [offer("a.pdf", shared_stream_pdf()), offer("b.pdf", many_pages_pdf()),
             offer("big.txt", "ü ✓ text\n".encode() * 1_600_000, declared="text/plain")]
    async with LoopLag() as lag:
        intake = await reader.take(files)
    assert [s.name for s in intake.skipped] == ["a.pdf", "b.pdf"]
    assert [f.name for f in intake.files] == ["big.txt"]
    assert lag.longest_held < 0.3, f"the loop was held {lag.longest_held:.3f} s"


@pytest.mark.parametrize(("declared", "stored"), [
    ("text/plain", "text/plain"),
    ("Text/Markdown; charset=UTF-8", "text/markdown"),
    ("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
     "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
    ("text/plain\r\nX-Evil: 1", "application/octet-stream"),
    ("text/plain\x00", "application/octet-stream"),
    ("text/" + "x" * MIME_CHARS, "application/octet-stream"),
    ("text", "application/octet-stream"),
    ("text/plain extra", "application/octet-stream"),
    ("tëxt/plain", "application/octet-stream"),
    ("", "application/octet-stream"),
    (None, "application/octet-stream"),
])
def test_a_declared_type_is_kept_only_as_type_and_subtype(declared: str | None,
                                                           stored: str) -> None:
    assert media_type(declared) == stored


def test_a_hostile_declared_type_never_becomes_the_stored_one() -> None:
    assert kind_of("a.txt", "text/plain\r\nX-Evil: 1", b"hi") == "text/plain"
    assert kind_of("a.csv", "text/csv\x00", b"a,b") == "text/plain"
    assert kind_of("a.md", "text/" + "m" * 200, b"# hi") == "text/plain"
    assert kind_of("a.bin", "text/plain\r\n", b"hi") == Skipped(
        "a.bin", "this type of file is not supported (only images (PNG, JPEG, GIF, WebP), "
        "text, Markdown, code, CSV, JSON, logs and PDFs)")
