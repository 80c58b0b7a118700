"""Path, query and header parameters shared by the admin routes, with the limits the OpenAPI shows."""

from __future__ import annotations

from typing import Annotated

from litestar.params import HeaderParameter, PathParameter, QueryParameter

from admin.text import NO_NUL
from core.text.field_errors import MAX_ID

SessionId = Annotated[int, PathParameter(ge=1, le=MAX_ID, description="id of a chat session")]
AttachmentId = Annotated[
    int, PathParameter(ge=1, le=MAX_ID, description="id of a file (`attachments[].id` of a message)")
]
MessageId = Annotated[int, PathParameter(ge=1, le=MAX_ID, description="id of a chat message")]
PageLimit = Annotated[int, QueryParameter(ge=1, le=200, description="at most this many items")]
BeforeId = Annotated[
    int | None, QueryParameter(ge=1, le=MAX_ID, description="a message of the active branch: page before it")
]
# Plain strings (empty = not given): a query value is never JSON null.
Search = Annotated[
    str, QueryParameter(max_length=200, pattern=NO_NUL, description="in titles and message texts")
]
PageCursor = Annotated[
    str, QueryParameter(max_length=200, pattern=NO_NUL, description="`nextCursor` of the page before")
]
# Run ids are chosen by the run pool (hex uuids); any URL-safe id up to the column's width.
RunId = Annotated[
    str, PathParameter(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9._~-]+$",
                       description="id of a run (`runId` of the run's answer)")
]
MAX_SEQ = 2**31 - 1  # event seqs are 32-bit integers in the log table
_FROM_ZERO = {"minimum": 0}  # Litestar leaves a falsy bound like `ge=0` out of the document
LastEventIdHeader = Annotated[
    int | None,
    HeaderParameter(
        name="Last-Event-ID", ge=0, le=MAX_SEQ, schema_extra=_FROM_ZERO,
        description="the `id:` of the last event received: the stream goes on after it (wins "
                    "over `lastEventId`; browsers send it when an EventSource reconnects)",
    ),
]
LastEventIdQuery = Annotated[
    int | None,
    QueryParameter(
        name="lastEventId", ge=0, le=MAX_SEQ, schema_extra=_FROM_ZERO,
        description="the `id:` of the last event received, for clients that cannot set headers",
    ),
]
