"""Opening, migrating and closing the database named by DATABASE_URL."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from core.errors import InvalidInput
from tortoise import Tortoise, connections
from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.backends.base.config_generator import expand_db_url
from tortoise.migrations.api import migrate as tortoise_migrate

APP_LABEL = "hermes"
EDGE = "edge"  # PostgreSQL: the pool of core/edge's one-statement writes (`edge_connection`)
EDGE_POOL = 3  # its connections at most
POSTGRES_SCHEMES = ("postgres", "postgresql")
URL_FORMS = ("sqlite://data/hermes-chat.sqlite3 (a path under the working folder), "
             "sqlite:///var/lib/hermes-chat/db.sqlite3 (an absolute path) or "
             "postgres://user:password@host:5432/dbname")


def check_url(database_url: str) -> None:
    """InvalidInput naming DATABASE_URL and the forms it takes, unless the URL is one the
    database layer can open (SQLite with a path, or PostgreSQL). The value itself is never
    repeated: it may hold a password."""
    scheme, sep, rest = database_url.partition("://")
    if not sep:
        one_slash = database_url.startswith("sqlite:")
        why = "needs two slashes after 'sqlite:'" if one_slash else "is not a database URL"
        raise InvalidInput(f"DATABASE_URL {why}; write {URL_FORMS}")
    if scheme == "sqlite":
        if not rest.split("?", 1)[0]:
            raise InvalidInput(f"DATABASE_URL names no SQLite file; write {URL_FORMS}")
        return
    if scheme not in POSTGRES_SCHEMES:
        raise InvalidInput(f"DATABASE_URL: {scheme or 'an empty scheme'}:// is not supported "
                           f"(SQLite and PostgreSQL are); write {URL_FORMS}")
    try:
        _ = urlsplit(database_url).port
    except ValueError:
        raise InvalidInput(f"DATABASE_URL has a port that is not a number; write {URL_FORMS}"
                           ) from None


def tortoise_config(database_url: str) -> dict[str, Any]:
    """The tortoise configuration of our one app, its models and its migrations package; on
    PostgreSQL with a second, small pool (`edge_connection`)."""
    connections_: dict[str, Any] = {"default": _connection(database_url)}
    if not is_sqlite(database_url):
        connections_[EDGE] = _edge_connection(database_url)
    return {
        "connections": connections_,
        "apps": {
            APP_LABEL: {
                "models": ["core.store.models"],
                "default_connection": "default",
                "migrations": "migrations",
            }
        },
        "use_tz": True,
        "timezone": "UTC",
    }


def _connection(database_url: str) -> str | dict[str, Any]:
    if is_sqlite(database_url):
        return database_url
    expanded = expand_db_url(database_url)
    return {**expanded, "engine": "core.store.pg_engine"}  # asyncpg without a reset per release


def _edge_connection(database_url: str) -> dict[str, Any]:
    config = _connection(database_url)
    assert isinstance(config, dict)
    credentials = {**config["credentials"], "minsize": 1, "maxsize": EDGE_POOL}
    return {**config, "credentials": credentials}


def edge_connection() -> BaseDBAsyncClient:
    """Where core/edge writes its single statements (a platform event taken once, a rate
    budget's take): on PostgreSQL a pool of their own, so that a platform's intake never waits
    for a connection behind the runtime's transactions (a burst of new conversations holds
    every connection of the main pool for seconds: bench/README.md, "Load"); on SQLite the one
    connection there is."""
    return connections.get(EDGE if EDGE in connections.db_config else "default")


def is_sqlite(database_url: str) -> bool:
    """Whether the URL names the embedded SQLite backend."""
    return database_url.startswith("sqlite://")


def asyncpg_dsn(database_url: str) -> str:
    """The URL as asyncpg takes it (it knows `postgresql://`, tortoise also `postgres://`)."""
    if database_url.startswith("postgres://"):
        return "postgresql://" + database_url.split("://", 1)[1]
    return database_url


def sqlite_path(database_url: str) -> Path:
    """The file a `sqlite://` URL names (relative to the working folder unless absolute)."""
    return Path(database_url.removeprefix("sqlite://").split("?", 1)[0])


def _ensure_sqlite_folder(database_url: str) -> None:
    path = sqlite_path(database_url)
    if str(path) != ":memory:":
        path.parent.mkdir(parents=True, exist_ok=True)


async def migrate(database_url: str) -> list[str]:
    """Apply every migration in `migrations/` that the database has not seen yet; the names
    of those applied (`hermes.0001_initial`), in order, for the caller to report."""
    if is_sqlite(database_url):
        _ensure_sqlite_folder(database_url)
    applied: list[str] = []

    def progress(event: str, app_label: str, name: str) -> None:
        if event == "apply_done":
            applied.append(f"{app_label}.{name}")

    try:
        await tortoise_migrate(config=tortoise_config(database_url), progress=progress)
    finally:
        await Tortoise.close_connections()
    return applied


def describe(database_url: str) -> str:
    """Where the database is, without its credentials: `sqlite data/x.sqlite3`,
    `postgres db.internal:5432/hermes`."""
    if is_sqlite(database_url):
        return f"sqlite {sqlite_path(database_url)}"
    parts = urlsplit(database_url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme} {parts.hostname or 'localhost'}{port}{parts.path}"


async def open_database(database_url: str) -> None:
    """Connect the ORM for this process (requests of every task share the connection)."""
    if is_sqlite(database_url):
        _ensure_sqlite_folder(database_url)
    await Tortoise.init(config=tortoise_config(database_url), _enable_global_fallback=True)


async def close_database() -> None:
    """Close every connection opened by `open_database`."""
    await Tortoise.close_connections()


@asynccontextmanager
async def database(database_url: str, *, run_migrations: bool = True) -> AsyncIterator[None]:
    """Migrate (by default), open, and close the database around a block."""
    if run_migrations:
        await migrate(database_url)
    await open_database(database_url)
    try:
        yield
    finally:
        await close_database()


async def ping() -> bool:
    """Whether the database answers a trivial query."""
    await connections.get("default").execute_query("SELECT 1")
    return True


async def first_value(query: Awaitable[Any]) -> Any:
    """The first value of a `values_list(field, flat=True)` query, None when it matched no row
    (tortoise types a flat list as a list of tuples; this reads it as what it is)."""
    rows = await query
    return rows[0] if rows else None
