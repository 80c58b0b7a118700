"""What the fake records: REST calls, gateway frames and interactions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Payload = dict[str, Any]


@dataclass(frozen=True)
class UploadedFile:
    """One file part of a multipart request."""

    field: str
    filename: str
    content_type: str
    data: bytes


@dataclass
class Call:
    """One REST request, recorded on arrival; `status`/`response` are set when answered.

    `route` is named like discord.py's `Route.key`
    (`"POST /channels/{channel_id}/messages"`), `path` is the concrete path without the
    `/api/v10` prefix, `json` the JSON body (or multipart `payload_json`), `at` the
    fake's clock at arrival.
    """

    seq: int
    at: float
    method: str
    path: str
    route: str
    params: dict[str, str]
    query: dict[str, str]
    json: Any
    files: list[UploadedFile]
    status: int | None = None
    response: Any = None


@dataclass(frozen=True)
class Frame:
    """One gateway frame, sent by the fake (`"out"`) or by the client (`"in"`)."""

    direction: str
    op: int
    t: str | None
    s: int | None
    d: Any
    connection: int


@dataclass
class InteractionRecord:
    """An interaction the fake dispatched and everything the bot answered to it."""

    payload: Payload
    created_at: float
    callbacks: list[Payload] = field(default_factory=list)
    original_message_id: str | None = None
    followup_ids: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.payload["id"]

    @property
    def token(self) -> str:
        return self.payload["token"]

    @property
    def response(self) -> Payload | None:
        """The first callback body (`{"type": 4, "data": {...}}`), if any."""
        return self.callbacks[0] if self.callbacks else None

    @property
    def modal(self) -> Payload | None:
        """The modal the bot opened (callback type 9 data), if any."""
        return next((c.get("data") for c in self.callbacks if c.get("type") == 9), None)
