"""How Slack Web API requests arrive (query, form or JSON; token header) and errors leave."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

Args = dict[str, Any]
Body = dict[str, Any]

# Arguments that slack_sdk sends as JSON strings when the body is form-encoded.
_JSON_ARGS = frozenset({"blocks", "attachments", "view", "files", "metadata", "unfurl"})


class ApiError(Exception):
    """A method's `{"ok": false, "error": code, ...}` answer (HTTP 200, as Slack does)."""

    def __init__(self, code: str, **extra: Any) -> None:
        super().__init__(code)
        self.code = code
        self.extra = extra

    def body(self) -> Body:
        return {"ok": False, "error": self.code, **self.extra}


class RateLimited(ApiError):
    """HTTP 429 `ratelimited` with a Retry-After header."""

    def __init__(self, retry_after: int) -> None:
        super().__init__("ratelimited")
        self.retry_after = retry_after


async def read_args(request: web.Request) -> Args:
    """Query parameters merged with a form or JSON body, JSON-string arguments decoded."""
    args: Args = dict(request.query)
    if request.content_type == "application/json":
        raw = await request.read()
        body = json.loads(raw) if raw else {}
        if not isinstance(body, dict):
            raise ApiError("invalid_json")
        args.update(body)
    elif request.method == "POST" and request.can_read_body:
        form = await request.post()
        args.update({k: v if isinstance(v, str) else v.file.read() for k, v in form.items()})
    for key in _JSON_ARGS & args.keys():
        if isinstance(args[key], str) and args[key]:
            try:
                args[key] = json.loads(args[key])
            except ValueError as error:
                raise ApiError("invalid_arguments", detail=f"{key} is not JSON") from error
    return args


def take_token(request: web.Request, args: Args) -> str | None:
    """The bearer token, or a legacy `token` argument (removed from args)."""
    header = request.headers.get("Authorization", "")
    token = args.pop("token", None)
    if header.startswith("Bearer "):
        return header.removeprefix("Bearer ").strip()
    return token if isinstance(token, str) else None


def require(args: Args, *names: str) -> None:
    """Slack answers `invalid_arguments` when a required argument is missing."""
    missing = [name for name in names if args.get(name) in (None, "")]
    if missing:
        raise ApiError("invalid_arguments", response_metadata={
            "messages": [f"[ERROR] missing required field: {name}" for name in missing]
        })
