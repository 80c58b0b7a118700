"""Checks every request passes before its handler's parameters are parsed.

- A repeated query parameter is refused: every parameter of this API is one value.
- A JSON body is decoded strictly against the handler's body type first: Litestar converts
  bodies leniently (`1` for `true`, `"5"` for `5`), but a wrong JSON type is a bad body.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request
from litestar.exceptions import ValidationException


async def check_request(request: Request[Any, Any, Any]) -> None:
    """The app's `before_request` hook (it runs after the auth guard)."""
    _refuse_repeated_parameters(request)
    await _decode_body_strictly(request)


def _refuse_repeated_parameters(request: Request[Any, Any, Any]) -> None:
    for name, values in request.query_params.dict().items():
        if len(values) > 1:
            raise ValidationException(
                f"query parameter {name!r} given {len(values)} times",
                extra=[{"key": name, "message": "must be given at most once", "source": "query"}],
            )


async def _decode_body_strictly(request: Request[Any, Any, Any]) -> None:
    field = request.route_handler.parsed_data_field
    if field is None:
        return
    raw = await request.body()
    if not raw.strip():
        return  # Litestar answers a missing required body itself
    try:
        msgspec.json.decode(raw, type=field.annotation, strict=True)
    except msgspec.ValidationError as error:
        # msgspec says where: "Expected `bool`, got `int` - at `$.keepHistory`".
        message, _, where = str(error).partition(" - at `$")
        key = where.rstrip("`").lstrip(".") or "data"
        raise ValidationException(
            "invalid body", extra=[{"key": key, "message": message, "source": "body"}]
        ) from None
    except msgspec.DecodeError:
        return  # not JSON at all: Litestar's own answer (400, "JSON is malformed") stands
