"""Path and query parameters shared by the admin routes, with the limits the OpenAPI shows."""

from __future__ import annotations

from typing import Annotated

from litestar.params import PathParameter, QueryParameter

from admin.text import NO_NUL
from core.field_errors import MAX_ID

SessionId = Annotated[int, PathParameter(ge=1, le=MAX_ID, description="id of a chat session")]
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
