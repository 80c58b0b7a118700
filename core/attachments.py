"""Files that come with a user's message: which are read, how the agent is given them, and why
the others are skipped.

Every file is untrusted: its kind is read from its bytes (magic numbers, UTF-8 text), and the
name and declared MIME type must agree with that kind. Images (PNG, JPEG, GIF, WebP) become
image parts of the user message (OpenAI-style `image_url` with a `data:` URL); text-like files
and PDFs (their extracted text) are inlined in the message's text, each fenced with its name.
A file over `ATTACHMENT_MAX_BYTES`, beyond `ATTACHMENTS_PER_MESSAGE`, of another type or that
could not be downloaded is not sent: it is `Skipped`, with the reason the chat shows.
"""

from __future__ import annotations

import base64
import hashlib
import io
import logging
import re
import unicodedata
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from core.safe_text import clean_text

log = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 20 * 1024 * 1024  # ATTACHMENT_MAX_BYTES
DEFAULT_PER_MESSAGE = 10  # ATTACHMENTS_PER_MESSAGE
INLINE_CHARS = 200_000  # of one file's text given to the agent; the rest is cut, and said so
NAME_CHARS = 200

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
    """ATTACHMENT_MAX_BYTES and ATTACHMENTS_PER_MESSAGE."""

    max_bytes: int = DEFAULT_MAX_BYTES
    per_message: int = DEFAULT_PER_MESSAGE


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
    text: str | None = None  # a text file's or a PDF's text; None for an image

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


def safe_name(name: str) -> str:
    """A file name fit to show, store and send: its last path segment, without control
    characters, bounded; `file` if nothing is left."""
    text = clean_text(name).replace("\\", "/").rsplit("/", 1)[-1]
    text = "".join(" " if unicodedata.category(c).startswith("C") else c for c in text)
    text = " ".join(text.split()).strip(". ")
    return text[:NAME_CHARS] or "file"


async def take(offers: Sequence[FileOffer], limits: Limits) -> Intake:
    """Download and classify a message's files within the limits: the files read, in order,
    and the ones skipped with the reason."""
    files: list[StoredFile] = []
    skipped: list[Skipped] = []
    for index, offer in enumerate(offers):
        name = safe_name(offer.name)
        if index >= limits.per_message:
            skipped.append(Skipped(name, _beyond(limits.per_message)))
            continue
        outcome = await _take_one(offer, name, limits)
        if isinstance(outcome, StoredFile):
            files.append(outcome)
        else:
            skipped.append(outcome)
    return Intake(tuple(files), tuple(skipped))


async def _take_one(offer: FileOffer, name: str, limits: Limits) -> StoredFile | Skipped:
    if offer.size is not None and offer.size > limits.max_bytes:
        return Skipped(name, _too_big(limits.max_bytes))
    try:
        data = await offer.download(limits.max_bytes + 1)
    except Refused as refusal:
        log.warning("did not download %r: %s", name, refusal)
        return Skipped(name, refusal.reason)
    except Exception as error:  # the platform's CDN or API failed: the text still goes
        log.warning("could not download %r: %s: %s", name, type(error).__name__, error)
        return Skipped(name, "it could not be downloaded")
    if len(data) > limits.max_bytes:
        return Skipped(name, _too_big(limits.max_bytes))
    return classify(name, offer.declared_type, data)


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


def classify(name: str, declared_type: str | None, data: bytes) -> StoredFile | Skipped:
    """Pure: what a file is, from its bytes first; its name or declared type must agree."""
    declared = (declared_type or "").split(";", 1)[0].strip().lower()
    extension = _extension(name)
    if not data:
        return Skipped(name, "it is empty")
    for mime, (matches, extensions) in IMAGE_TYPES.items():
        if matches(data):
            if declared.startswith("image/") or extension in extensions:
                return StoredFile(name, mime, data)
            return Skipped(name, "its name and type do not say it is an image, but it is one")
    if data.startswith(b"%PDF-"):
        return _pdf(name, data)
    claims_image = declared.startswith("image/") or _image_extension(extension)
    claims_pdf = declared == PDF_TYPE or extension == ".pdf"
    if claims_image or claims_pdf:
        kind = "an image" if claims_image else "a PDF"
        return Skipped(name, f"it is named as {kind} but its contents are not one")
    if not _text_like(name, declared):
        return Skipped(name, f"this type of file is not supported (only {_FILE_KINDS})")
    text = _decode(data)
    if text is None:
        return Skipped(name, "it is not readable text (UTF-8)")
    return StoredFile(name, _text_type(declared), data, text)


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


def _decode(data: bytes) -> str | None:
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def _pdf(name: str, data: bytes) -> StoredFile | Skipped:
    try:
        text = _pdf_text(data)
    except Exception as error:  # pypdf raises many kinds on a broken file
        log.info("could not read the PDF %r: %s: %s", name, type(error).__name__, error)
        return Skipped(name, "it is a PDF that could not be read")
    if not text.strip():
        return Skipped(name, "it is a PDF without text (a scan?)")
    return StoredFile(name, PDF_TYPE, data, text)


def _pdf_text(data: bytes) -> str:
    from pypdf import PdfReader  # imported only when a PDF comes: it is large

    reader = PdfReader(io.BytesIO(data))
    pages = []
    for number, page in enumerate(reader.pages, start=1):
        pages.append(f"[page {number}]\n{page.extract_text() or ''}".rstrip())
    return "\n\n".join(pages)


# -- what the agent is given -----------------------------------------------------------------

Part = dict[str, Any]


class GivenFile(Protocol):
    """What the agent is given of a file: a StoredFile at intake, or one read back from the
    database without the bytes it does not need (core.attachment_store.AgentFile)."""

    @property
    def name(self) -> str: ...
    @property
    def mime_type(self) -> str: ...
    @property
    def data(self) -> bytes: ...  # an image's bytes
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
        parts.append({"type": "image_url", "image_url": {"url": data_url(image)}})
    return parts


def data_url(image: GivenFile) -> str:
    """An image as a `data:` URL."""
    return f"data:{image.mime_type};base64,{base64.b64encode(image.data).decode('ascii')}"


def fenced(name: str, text: str) -> str:
    """Pure: a file's text in a Markdown fence headed by its name. The fence is longer than any
    run of backticks in the text, so nothing in the file closes it early; text beyond
    INLINE_CHARS is cut, and the cut said."""
    body = clean_text(text)
    if len(body) > INLINE_CHARS:
        body = body[:INLINE_CHARS] + f"\n[… cut: {len(text) - INLINE_CHARS} more characters]"
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
