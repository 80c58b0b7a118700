"""Files that come with a user message: which are read, how the agent is given them, and why
the others are skipped.

Every file is untrusted: its kind is read from its bytes (magic numbers, UTF-8 text), and the
name and declared MIME type must agree with that kind; a declared type is kept only as
`type/subtype` in RFC 9110 token characters (`media_type`). Images (PNG, JPEG, GIF, WebP)
become image parts of the user message (OpenAI-style `image_url` with a `data:` URL); text-like
files and PDFs (their extracted text) are inlined in the message's text, each fenced with its
name. Reading a text file or a PDF is CPU work on untrusted bytes: it runs in a worker process
(core/edge/workers.py), within ATTACHMENT_PARSE_SECONDS, and a PDF of more than ATTACHMENT_PDF_PAGES
pages is not read. What is kept of a file's text is what can be sent: INLINE_CHARS characters.
A file over `ATTACHMENT_MAX_BYTES`, beyond `ATTACHMENTS_PER_MESSAGE`, of another type, that could
not be downloaded or read within those limits is not sent: it is `Skipped`, with the reason the
chat shows.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import logging
import re
import unicodedata
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from core.edge.workers import JobFailed, JobTimedOut, WorkerPool
from core.text.safe_text import clean_text

log = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 20 * 1024 * 1024  # ATTACHMENT_MAX_BYTES
DEFAULT_PER_MESSAGE = 10  # ATTACHMENTS_PER_MESSAGE
HISTORY_ATTACHMENT_BYTES = 20 * 1024 * 1024  # of earlier files a request carries again
MAX_HISTORY_ATTACHMENT_BYTES = 128 * 1024 * 1024  # with a turn's own files, under the Bridge's 512 MiB
DEFAULT_PARSE_SECONDS = 10  # ATTACHMENT_PARSE_SECONDS
DEFAULT_PDF_PAGES = 300  # ATTACHMENT_PDF_PAGES
INLINE_CHARS = 200_000  # of one file's text kept and given to the agent, the cut said within
NAME_CHARS = 200
MIME_CHARS = 128  # the width of `attachment.mime_type`
OCTET_STREAM = "application/octet-stream"

IMAGE_TYPES = {  # MIME type: (magic test, the names it goes by)
    "image/png": (lambda b: b.startswith(b"\x89PNG\r\n\x1a\n"), (".png",)),
    "image/jpeg": (lambda b: b.startswith(b"\xff\xd8\xff"), (".jpg", ".jpeg", ".jpe", ".jfif")),
    "image/gif": (lambda b: b[:6] in (b"GIF87a", b"GIF89a"), (".gif",)),
    "image/webp": (lambda b: b[:4] == b"RIFF" and b[8:12] == b"WEBP", (".webp",)),
}
PDF_TYPE = "application/pdf"
TEXT_EXTENSIONS = frozenset({
    ".txt", ".text", ".md", ".markdown", ".rst", ".csv", ".tsv", ".json", ".jsonl", ".ndjson",
    ".log", ".out", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf", ".env", ".xml", ".html",
    ".htm", ".css", ".scss", ".sql", ".py", ".pyi", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx",
    ".java", ".kt", ".kts", ".scala", ".go", ".rs", ".c", ".h", ".cc", ".cpp", ".hpp", ".cs",
    ".rb", ".php", ".pl", ".lua", ".r", ".swift", ".m", ".sh", ".bash", ".zsh", ".fish", ".ps1",
    ".bat", ".dockerfile", ".makefile", ".gradle", ".properties", ".diff", ".patch", ".tf",
    ".proto", ".graphql", ".vue", ".svelte", ".dart", ".ex", ".exs", ".erl", ".hs", ".clj",
    ".ml", ".vim", ".gitignore", ".srt", ".vtt", ".tex", ".bib", ".adoc", ".org",
})
TEXT_NAMES = frozenset({"dockerfile", "makefile", "readme", "license", "changelog", "procfile"})
TEXT_MIME_TYPES = frozenset({
    "application/json", "application/x-ndjson", "application/xml", "application/x-yaml",
    "application/yaml", "application/toml", "application/javascript", "application/x-sh",
    "application/sql", "application/x-python", "application/csv",
})
_FILE_KINDS = "images (PNG, JPEG, GIF, WebP), text, Markdown, code, CSV, JSON, logs and PDFs"


@dataclass(frozen=True, slots=True)
class Limits:
    """ATTACHMENT_MAX_BYTES, ATTACHMENTS_PER_MESSAGE, ATTACHMENT_PARSE_SECONDS and
    ATTACHMENT_PDF_PAGES."""

    max_bytes: int = DEFAULT_MAX_BYTES
    per_message: int = DEFAULT_PER_MESSAGE
    parse_seconds: float = DEFAULT_PARSE_SECONDS
    pdf_pages: int = DEFAULT_PDF_PAGES


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True, slots=True)
class FileOffer:
    """A file a platform says a message carries, not yet downloaded. `download(limit)` answers
    at most `limit` bytes (one more than the cap is enough to know it is over)."""

    name: str
    declared_type: str | None
    size: int | None
    download: Callable[[int], Awaitable[bytes]]


class Refused(Exception):
    """A download refused (not from where the platform keeps its files, say): `reason` is
    what the chat shows, `detail` what the log says besides (the URL, without credentials)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason} ({detail})")
        self.reason = reason


@dataclass(frozen=True, slots=True)
class StoredFile:
    """A file that is read: what is stored with the message and given to the agent."""

    name: str
    mime_type: str
    data: bytes
    text: str | None = None  # a text file's or a PDF's text as kept (`kept`); None for an image

    @property
    def size(self) -> int:
        return len(self.data)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def is_image(self) -> bool:
        return self.text is None


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file that is not sent, and why (the words the chat shows)."""

    name: str
    reason: str


@dataclass(frozen=True, slots=True)
class Intake:
    """What became of a message's files."""

    files: tuple[StoredFile, ...] = ()
    skipped: tuple[Skipped, ...] = ()


class Unreadable(Exception):
    """A text file or PDF whose text could not be had: `reason` is what the chat shows,
    `detail` what the log gets (raised in a worker process, so both are plain arguments)."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(reason, detail)
        self.reason = reason
        self.detail = detail


def safe_name(name: str) -> str:
    """A file name fit to show, store and send: its last path segment, without control
    characters, bounded; `file` if nothing is left."""
    text = clean_text(name).replace("\\", "/").rsplit("/", 1)[-1]
    text = "".join(" " if unicodedata.category(c).startswith("C") else c for c in text)
    text = " ".join(text.split()).strip(". ")
    return text[:NAME_CHARS] or "file"


_TOKEN = r"[!#$%&'*+.^_`|~0-9a-z-]+"  # RFC 9110 token characters (lower-cased)
_MEDIA_TYPE = re.compile(f"{_TOKEN}/{_TOKEN}")


def media_type(declared: str | None) -> str:
    """Pure: a declared MIME type as it may be stored and sent as a header: `type/subtype` in
    token characters, lower-cased, its parameters dropped, at most MIME_CHARS characters;
    `application/octet-stream` for anything else (a CR or LF, a NUL, a space, no subtype)."""
    value = (declared or "").split(";", 1)[0].strip(" \t").lower()
    if len(value) <= MIME_CHARS and _MEDIA_TYPE.fullmatch(value):
        return value
    return OCTET_STREAM


class FileReader:
    """Reads a message's files within `limits`; the CPU-heavy part of each (a text file's
    decoding, a PDF's text) in worker processes, so the event loop never waits on a file.
    Its workers start at the first file read; `close()` stops them."""

    def __init__(self, limits: Limits = DEFAULT_LIMITS, workers: WorkerPool | None = None) -> None:
        self.limits = limits
        self.workers = workers if workers is not None else WorkerPool(preload=("pypdf",))

    async def take(self, offers: Sequence[FileOffer]) -> Intake:
        """Download and read a message's files, together: the files read, in order, and the
        ones skipped with the reason."""
        per_message = self.limits.per_message
        outcomes = await asyncio.gather(*(
            self._take_one(offer, safe_name(offer.name)) for offer in offers[:max(0, per_message)]))
        beyond = [Skipped(safe_name(o.name), _beyond(per_message)) for o in offers[max(0, per_message):]]
        files = [o for o in outcomes if isinstance(o, StoredFile)]
        skipped = [o for o in outcomes if isinstance(o, Skipped)] + beyond
        return Intake(tuple(files), tuple(skipped))

    async def close(self) -> None:
        """Stop the workers (a file being read then is skipped)."""
        await self.workers.close()

    async def _take_one(self, offer: FileOffer, name: str) -> StoredFile | Skipped:
        data = await _download(offer, name, self.limits.max_bytes)
        if isinstance(data, Skipped):
            return data
        mime = kind_of(name, offer.declared_type, data)
        if isinstance(mime, Skipped) or mime in IMAGE_TYPES:
            return StoredFile(name, mime, data) if isinstance(mime, str) else mime
        return await self._read(name, mime, data)

    async def _read(self, name: str, mime: str, data: bytes) -> StoredFile | Skipped:
        limits = self.limits
        try:
            text = await self.workers.run(text_of, mime, data, limits.pdf_pages,
                                          seconds=limits.parse_seconds)
        except Unreadable as error:
            if error.detail:
                log.info("could not read %r: %s", name, error.detail)
            return Skipped(name, error.reason)
        except JobTimedOut:
            log.warning("reading %r (%s, %d bytes) took more than %g s: stopped", name, mime,
                        len(data), limits.parse_seconds)
            cap = f"{limits.parse_seconds:g} second" + ("" if limits.parse_seconds == 1 else "s")
            return Skipped(name, f"reading it took more than {cap}")
        except JobFailed as error:
            log.warning("could not read %r (%s, %d bytes): %s", name, mime, len(data), error)
            return Skipped(name, "it could not be read")
        return StoredFile(name, mime, data, text)


async def _download(offer: FileOffer, name: str, max_bytes: int) -> bytes | Skipped:
    if offer.size is not None and offer.size > max_bytes:
        return Skipped(name, _too_big(max_bytes))
    try:
        data = await offer.download(max_bytes + 1)
    except Refused as refusal:
        log.warning("did not download %r: %s", name, refusal)
        return Skipped(name, refusal.reason)
    except Exception as error:  # the platform's CDN or API failed: the text still goes
        log.warning("could not download %r: %s: %s", name, type(error).__name__, error)
        return Skipped(name, "it could not be downloaded")
    if len(data) > max_bytes:
        return Skipped(name, _too_big(max_bytes))
    return data


def _beyond(per_message: int) -> str:
    if per_message <= 0:
        return "files are not read here"
    return f"only {per_message} files of a message are read"


def _too_big(max_bytes: int) -> str:
    return f"it is larger than {describe_size(max_bytes)}"


def describe_size(size: int) -> str:
    """A byte count as people read it: `20 MiB`, `512 KiB`, `12 bytes`."""
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            value = size / scale
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{size} bytes"


def kind_of(name: str, declared_type: str | None, data: bytes) -> str | Skipped:
    """Pure and cheap (the first bytes, the name, the declared type): the MIME type a file is
    stored with, from its bytes first, its name or declared type agreeing; or why it is
    skipped. A text file's or a PDF's text is yet to be read (`text_of`)."""
    declared = media_type(declared_type)
    extension = _extension(name)
    if not data:
        return Skipped(name, "it is empty")
    for mime, (matches, extensions) in IMAGE_TYPES.items():
        if matches(data):
            if declared.startswith("image/") or extension in extensions:
                return mime
            return Skipped(name, "its name and type do not say it is an image, but it is one")
    if data.startswith(b"%PDF-"):
        return PDF_TYPE
    claims_image = declared.startswith("image/") or _image_extension(extension)
    claims_pdf = declared == PDF_TYPE or extension == ".pdf"
    if claims_image or claims_pdf:
        kind = "an image" if claims_image else "a PDF"
        return Skipped(name, f"it is named as {kind} but its contents are not one")
    if not _text_like(name, declared):
        return Skipped(name, f"this type of file is not supported (only {_FILE_KINDS})")
    return _text_type(declared)


def _extension(name: str) -> str:
    base = name.lower()
    return base[base.rfind("."):] if "." in base else ""


def _image_extension(extension: str) -> bool:
    return any(extension in extensions for _, extensions in IMAGE_TYPES.values())


def _text_like(name: str, declared: str) -> bool:
    if declared.startswith("text/") or declared in TEXT_MIME_TYPES:
        return True
    lowered = name.lower()
    return _extension(lowered) in TEXT_EXTENSIONS or lowered.split(".", 1)[0] in TEXT_NAMES


def _text_type(declared: str) -> str:
    if declared.startswith("text/") or declared in TEXT_MIME_TYPES:
        return declared
    return "text/plain"


def text_of(mime: str, data: bytes, pdf_pages: int = DEFAULT_PDF_PAGES) -> str:
    """Pure but CPU-heavy on untrusted bytes (a worker process runs it): a text file's or a
    PDF's text as it is kept (`kept`); Unreadable with the reason it is not read."""
    return kept(_pdf_text(data, pdf_pages) if mime == PDF_TYPE else _decoded(data))


def _decoded(data: bytes) -> str:
    if b"\x00" not in data:
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError:
            pass
    raise Unreadable("it is not readable text (UTF-8)")


def _pdf_text(data: bytes, pdf_pages: int) -> str:
    from pypdf import PdfReader  # imported as a worker starts (FileReader), not by the service

    try:
        reader = PdfReader(io.BytesIO(data))
        count = len(reader.pages)
        if count > pdf_pages:
            raise Unreadable(f"it is a PDF of {count} pages, more than the {pdf_pages} read")
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
    except Unreadable:
        raise
    except Exception as error:  # pypdf raises many kinds on a broken file
        raise Unreadable("it is a PDF that could not be read",
                         f"{type(error).__name__}: {error}") from None
    if not any(pages):
        raise Unreadable("it is a PDF without text (a scan?)")
    return "\n\n".join(f"[page {number}]\n{text}".rstrip()
                        for number, text in enumerate(pages, start=1))


_CUT = "\n[… cut: {} more characters]"
_CUT_ROOM = 48  # the longest the cut's note can be


def kept(text: str) -> str:
    """Pure: what is kept of a file's text, stored and given to the agent: cleaned (NUL and
    lone surrogates, core.text.safe_text) and at most INLINE_CHARS characters, a cut said at its
    end. Only what is kept is cleaned; kept text is kept as it is (`kept(kept(t)) == kept(t)`)."""
    if len(text) <= INLINE_CHARS:
        return clean_text(text)
    keep = INLINE_CHARS - _CUT_ROOM
    return clean_text(text[:keep]) + _CUT.format(len(text) - keep)


# -- what the agent is given -----------------------------------------------------------------

Part = dict[str, Any]


class GivenFile(Protocol):
    """What the agent is given of a file: a StoredFile at intake, or one read back from the
    database without the bytes it does not need (core.chat.attachment_store.AgentFile)."""

    @property
    def name(self) -> str: ...
    @property
    def mime_type(self) -> str: ...
    @property
    def url(self) -> str: ...  # an image as a `data:` URL (image_url), made off the event loop
    @property
    def text(self) -> str | None: ...  # a text file's or a PDF's text; None for an image
    @property
    def is_image(self) -> bool: ...


def content(text: str, files: Sequence[GivenFile]) -> str | list[Part]:
    """Pure: a user message's content for the model. Its text alone (a string) without files;
    with files, content parts: one text part (the message, then each text file fenced with its
    name), then an `image_url` part per image."""
    if not files:
        return text
    inlined = [text] + [fenced(f.name, f.text) for f in files if f.text is not None]
    parts: list[Part] = [{"type": "text", "text": "\n\n".join(p for p in inlined if p)}]
    for image in (f for f in files if f.is_image):
        parts.append({"type": "image_url", "image_url": {"url": image.url}})
    return parts


BASE64_SLICE = 3 * 256 * 1024  # bytes encoded at a time: a multiple of 3, so the slices join


async def data_url(mime_type: str, data: bytes) -> str:
    """An image as a `data:` URL, made in a thread a slice at a time: encoding 20 MiB takes
    tens of milliseconds, and the event loop waits for one slice at most (the GIL is handed
    over between slices), not for the whole image."""
    return await asyncio.to_thread(_data_url, mime_type, data)


def _data_url(mime_type: str, data: bytes) -> str:
    view = memoryview(data)
    slices = (base64.b64encode(view[i:i + BASE64_SLICE]).decode("ascii")
              for i in range(0, len(view), BASE64_SLICE))
    return "".join([f"data:{mime_type};base64,", *slices])


def fenced(name: str, text: str) -> str:
    """Pure: a file's text in a Markdown fence headed by its name. The fence is longer than any
    run of backticks in the text, so nothing in the file closes it early; the text is as
    `kept` keeps it (one stored before that was bounded is cut here)."""
    body = kept(text)
    marks = fence(body)
    label = safe_name(name).replace("`", "'")
    return f"File: {label}\n{marks}\n{body}\n{marks}"


def fence(body: str) -> str:
    """Pure: the backticks of a Markdown fence around `body` that nothing in it can close:
    longer than any run of backticks it holds (three at least)."""
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    return "`" * max(3, longest + 1)


def placeholder(files: Sequence[StoredFile]) -> str:
    """The text of a message that came with files and no words: the files' names."""
    return "📎 " + ", ".join(f.name for f in files)


def skipped_notice(skipped: Sequence[Skipped]) -> str | None:
    """Pure: what the thread says of the files that were not sent (None: every one was)."""
    if not skipped:
        return None
    lines = [f"• {s.name}: {s.reason}" for s in skipped]
    head = "I did not read this file:" if len(skipped) == 1 else "I did not read these files:"
    return "\n".join([head, *lines])
