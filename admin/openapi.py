"""The OpenAPI document at /schema/openapi.json (also /schema and /schema/openapi.yaml):
security scheme and the documented error answers.

The document is served as data only, behind the admin token: Litestar's documentation pages
(Swagger UI, Redoc, ...) load their scripts from public CDNs, so they would be blank on a
machine without internet and would have a browser fetch code from elsewhere
(docs/security.md); any OpenAPI viewer can open the JSON."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import msgspec

# Litestar 2.25 has no public way to mark a msgspec body closed; its own plugin is extended.
from litestar._openapi.schema_generation.plugins.struct import StructSchemaPlugin
from litestar import Router
from litestar.openapi import OpenAPIConfig, ResponseSpec
from litestar.openapi.plugins import JsonRenderPlugin, YamlRenderPlugin
from litestar.openapi.spec import Components, Operation, RequestBody, Schema, SecurityScheme
from litestar.typing import FieldDefinition

from admin.auth import SCHEME, require_admin_token
from admin.errors import ErrorBody

if TYPE_CHECKING:
    from litestar._openapi.schema_generation import SchemaCreator

_MEANINGS = {
    400: "A bad body or query value; `field` names it",
    401: "Missing or wrong bearer token",
    404: "No such session or message",
    409: "The session is busy with a run",
    413: "The body is larger than 1 MiB",
    429: "A spend limit is reached (code `spend_limit`; `limit` says which, `Retry-After` when "
         "it resets)",
    503: "The database or the Hermes Bridge is unreachable (`Retry-After` on a database outage)",
}
_DATABASE_DOWN = "The database is unreachable: try again after `Retry-After` seconds"
SCHEMA_PATH = "/schema"
SECURITY: tuple[dict[str, list[str]], ...] = ({SCHEME: []},)


def openapi_config(version: str) -> OpenAPIConfig:
    """The document's metadata, the bearer scheme the guarded routes declare, and its routes:
    JSON at /schema and /schema/openapi.json, YAML beside it, each behind the token."""
    return OpenAPIConfig(
        title="hermes-chat admin API",
        version=version,
        description="Browse, export and reset the conversations of hermes-chat.",
        path=SCHEMA_PATH,
        components=Components(
            security_schemes={SCHEME: SecurityScheme(type="http", scheme="bearer")}
        ),
        render_plugins=[JsonRenderPlugin(), YamlRenderPlugin(path=["/openapi.yaml", "/openapi.yml"])],
        openapi_router=Router(SCHEMA_PATH, route_handlers=[], guards=[require_admin_token],
                              include_in_schema=False, dto=None, return_dto=None),
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

