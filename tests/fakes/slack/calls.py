"""What the fake records of each request."""

from __future__ import annotations

from dataclasses import dataclass

from .wire import Args, Body


@dataclass
class Call:
    """One request, as received and as answered."""

    method: str  # "chat.update", or "upload" for the bytes sent to an upload URL
    args: Args
    token: str | None
    at: float  # the fake's clock on arrival
    status: int = 0  # 0 while unanswered (e.g. hanging)
    response: Body | None = None
    retry_after: int | None = None

    @property
    def ok(self) -> bool:
        return self.status == 200 and bool((self.response or {}).get("ok"))

    @property
    def error(self) -> str | None:
        return None if self.response is None else self.response.get("error")
