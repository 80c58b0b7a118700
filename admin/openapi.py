"""The OpenAPI document at /schema/openapi.json: security scheme and the documented error answers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import msgspec

# Litestar 2.25 has no public way to mark a msgspec body closed; its own plugin is extended.
from litestar._openapi.schema_generation.plugins.struct import StructSchemaPlugin
from litestar.openapi import OpenAPIConfig, ResponseSpec
from litestar.openapi.spec import Components, Operation, RequestBody, Schema, SecurityScheme
from litestar.typing import FieldDefinition

from admin.auth import SCHEME
from admin.errors import ErrorBody

if TYPE_CHECKING:
    from litestar._openapi.schema_generation import SchemaCreator

_MEANINGS = {
    400: "A bad body or query value; `field` names it",
    401: "Missing or wrong bearer token",
    404: "No such session or message",
    409: "The session is busy with a run",
    413: "The body is larger than 1 MiB",
    503: "The database or the Hermes Bridge is unreachable (`Retry-After` on a database outage)",
}
_DATABASE_DOWN = "The database is unreachable: try again after `Retry-After` seconds"
SECURITY: tuple[dict[str, list[str]], ...] = ({SCHEME: []},)


def openapi_config(version: str) -> OpenAPIConfig:
    """The document's metadata and the bearer scheme the guarded routes declare."""
    return OpenAPIConfig(
        title="hermes-chat admin API",
        version=version,
        description="Browse, export and reset the conversations of hermes-chat.",
        path="/schema",
        components=Components(
            security_schemes={SCHEME: SecurityScheme(type="http", scheme="bearer")}
        ),
    )


def errors(
    *statuses: int, meanings: Mapping[int, str] | None = None, database: bool = True
) -> dict[int, ResponseSpec]:
    """Error answers of a route: always 400 and 401, 503 when it reads the `database`, plus
    the given ones (503 among them: the Bridge too); `meanings` says what a status means on
    this route when the usual sentence does not fit."""
    said = {**_MEANINGS, **({} if 503 in statuses else {503: _DATABASE_DOWN}), **(meanings or {})}
    answered = {400, 401, *statuses, *((503,) if database else ())}
    return {
        status: ResponseSpec(
            data_container=ErrorBody, description=said[status], generate_examples=False
        )
        for status in sorted(answered)
    }


@dataclass
class OptionalBodyOperation(Operation):
    """An operation whose JSON body may be left out: Litestar marks every body required."""

    def __post_init__(self) -> None:
        if isinstance(self.request_body, RequestBody):
            self.request_body.required = False


class StrictStructSchemaPlugin(StructSchemaPlugin):
    """Litestar's msgspec schemas, plus `additionalProperties: false` for request bodies that
    refuse unknown fields, so the document says what the server enforces."""

    def to_openapi_schema(
        self, field_definition: FieldDefinition, schema_creator: SchemaCreator
    ) -> Schema:
        schema = super().to_openapi_schema(field_definition, schema_creator)
        info = msgspec.inspect.type_info(field_definition.type_)
        if isinstance(info, msgspec.inspect.StructType) and info.forbid_unknown_fields:
            schema.additional_properties = False
        return schema

