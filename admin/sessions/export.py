"""The export as an HTTP download: a chunked stream with a Content-Disposition safe for any title."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import quote

from litestar.openapi.spec import (
    OpenAPIHeader,
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    Operation,
    Schema,
)
from litestar.response import Stream

from core.conversation.browsing import Export, export_filename

# attr-char of RFC 5987 besides letters and digits; everything else is percent-encoded.
_ATTR_CHARS = "!#$&+-.^_`|~"
_UNSAFE = frozenset('/\\"')
MAX_NAME_CHARS = 100


def export_response(export: Export) -> Stream:
    """Stream the export's chunks (Transfer-Encoding: chunked) as an attachment."""
    return Stream(
        export.chunks(),
        media_type=export.media_type.partition(";")[0],
        headers={"Content-Disposition": content_disposition(export.session.title, export.format)},
    )


def content_disposition(title: str | None, format: str) -> str:
    """`attachment` with an ASCII `filename` and, for titles beyond ASCII, an RFC 5987 `filename*`."""
    full = _readable_name(title)
    return disposition(export_filename(title, format), f"{full}.{format}" if full else "")


def file_disposition(name: str) -> str:
    """The same for a file's own name (an attachment's): its ASCII letters as `filename`."""
    full = _readable_name(name)
    folded = unicodedata.normalize("NFKD", full).encode("ascii", "ignore").decode()
    ascii_name = re.sub(r"[^A-Za-z0-9._-]+", "_", folded).strip("._") or "file"
    return disposition(ascii_name, full)


def disposition(ascii_name: str, full: str) -> str:
    """`attachment; filename="<ascii_name>"`, with `filename*` when `full` goes beyond ASCII."""
    if not full or full.isascii():
        return f'attachment; filename="{ascii_name}"'
    encoded = quote(full, safe=_ATTR_CHARS)
    return f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{encoded}"


def _readable_name(title: str | None) -> str:
    # The title as people wrote it, minus what no file name should hold: controls, invisible
    # format characters (a right-to-left override could disguise the extension), slashes, quotes.
    text = unicodedata.normalize("NFC", title or "")
    kept = "".join(c if c.isprintable() and c not in _UNSAFE else " " for c in text)
    return re.sub(r"\s+", " ", kept).strip(" .")[:MAX_NAME_CHARS].strip()


@dataclass
class ExportOperation(Operation):
    """The export's 200 answer: Markdown or JSON by `format`, always an attachment."""

    def __post_init__(self) -> None:
        disposition = OpenAPIHeader(
            schema=Schema(type=OpenAPIType.STRING),
            description='attachment; filename="<ascii>"; filename*=UTF-8\'\'<title> (non-ASCII titles)',
        )
        text = Schema(type=OpenAPIType.STRING)
        self.responses = {
            **(self.responses or {}),
            "200": OpenAPIResponse(
                description="The conversation as a file (streamed, chunked)",
                headers={"Content-Disposition": disposition},
                content={
                    "text/markdown": OpenAPIMediaType(schema=text),
                    "application/json": OpenAPIMediaType(schema=Schema(type=OpenAPIType.OBJECT)),
                },
            ),
        }
