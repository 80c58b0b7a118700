"""Small real files for the attachment tests: an image of each kind, a PDF with text, and the
hostile PDFs of issue 26 (made here, not kept as blobs)."""

from __future__ import annotations

import base64
import zlib

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01" + b"\x00" * 16
GIF = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;"
WEBP = b"RIFF\x1a\x00\x00\x00WEBPVP8 " + b"\x00" * 14


def pdf(text: str) -> bytes:
    """A one-page PDF that says `text` (ASCII, no parentheses), with a correct xref table."""
    stream = f"BT /F1 18 Tf 10 50 Td ({text}) Tj ET".encode()
    return document([
        b"<</Type/Catalog/Pages 2 0 R>>",
        b"<</Type/Pages/Kids[3 0 R]/Count 1>>",
        (b"<</Type/Page/Parent 2 0 R/MediaBox[0 0 400 100]/Contents 4 0 R"
         b"/Resources<</Font<</F1 5 0 R>>>>>>"),
        b"<</Length %d>>stream\n" % len(stream) + stream + b"\nendstream",
        _FONT,
    ])


def shared_stream_pdf(pages: int = 40, shows: int = 150_000) -> bytes:
    """A hostile PDF of a few KB: `pages` pages that all draw one compressed content stream of
    `shows` text-showing operators, so that reading each page decompresses and interprets all
    of them again (about a second a page for pypdf on this machine)."""
    operators = zlib.compress(b"BT /F1 1 Tf " + b"(a) Tj " * shows + b"ET", 9)
    page = b"<</Type/Page/Parent 2 0 R/MediaBox[0 0 400 100]/Contents 3 0 R" \
           b"/Resources<</Font<</F1 4 0 R>>>>>>"
    return document([
        b"<</Type/Catalog/Pages 2 0 R>>",
        b"<</Type/Pages/Kids[" + b" ".join([b"5 0 R"] * pages) + b"]/Count %d>>" % pages,
        b"<</Length %d/Filter/FlateDecode>>stream\n" % len(operators) + operators + b"\nendstream",
        _FONT,
        page,
    ])


def many_pages_pdf(pages: int = 20_000) -> bytes:
    """A PDF of `pages` plain pages, each a reference to one page object (about 6 bytes a
    page): 20,000 of them is a 120 KB file."""
    stream = b"BT /F1 12 Tf 10 50 Td (page) Tj ET"
    return document([
        b"<</Type/Catalog/Pages 2 0 R>>",
        b"<</Type/Pages/Kids[" + b" ".join([b"5 0 R"] * pages) + b"]/Count %d>>" % pages,
        b"<</Length %d>>stream\n" % len(stream) + stream + b"\nendstream",
        _FONT,
        b"<</Type/Page/Parent 2 0 R/Contents 3 0 R/Resources<</Font<</F1 4 0 R>>>>>>",
    ])


_FONT = b"<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>"


def document(objects: list[bytes]) -> bytes:
    """A PDF of these objects (numbered from 1, the first the catalogue), with its xref table."""
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<</Size %d/Root 1 0 R>>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)
