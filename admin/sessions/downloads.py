"""A file of a user message as an HTTP download: its own type, always an attachment."""

from __future__ import annotations

from dataclasses import dataclass

from litestar import Response
from litestar.openapi.spec import (
    OpenAPIFormat,
    OpenAPIHeader,
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    Operation,
    Schema,
)

from admin.sessions.export import file_disposition
from core.conversation.vocabulary import AttachmentInfo

# Never rendered by the admin's origin: a stored HTML or SVG file must not run there.
_HEADERS = {"X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "default-src 'none'; sandbox"}


def attachment_response(info: AttachmentInfo, data: bytes) -> Response[bytes]:
    """The file's bytes with its MIME type and a Content-Disposition safe for any name."""
    headers = {**_HEADERS, "Content-Disposition": file_disposition(info.name),
               "X-Content-SHA256": info.sha256}
    return Response(data, media_type=info.mime_type, headers=headers)


@dataclass
class AttachmentOperation(Operation):
    """The download's 200 answer: the file, of the MIME type it was stored with."""

    def __post_init__(self) -> None:
        def header(description: str) -> OpenAPIHeader:
            return OpenAPIHeader(schema=Schema(type=OpenAPIType.STRING), description=description)

        binary = OpenAPIMediaType(schema=Schema(type=OpenAPIType.STRING,
                                                format=OpenAPIFormat.BINARY))
        self.responses = {
            **(self.responses or {}),
            "200": OpenAPIResponse(
                description="The file as the user sent it",
                headers={
                    "Content-Disposition": header(
                        'attachment; filename="<ascii>"; filename*=UTF-8\'\'<name> (non-ASCII names)'),
                    "X-Content-SHA256": header("the SHA-256 of the bytes, hex"),
                },
                content={"*/*": binary},
            ),
        }
