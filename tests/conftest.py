"""Suite-wide fixtures: loopback-only network, the database of this pytest process, and a real
Hermes Bridge (one per process: HERMES_HOME is process-wide) with a scripted LLM per test.

HERMES_TEST_DB picks the backend (sqlite, the default, or postgres); `scripts/test` runs the
whole suite on SQLite, then the `backend` tests on PostgreSQL, in separate processes. Each
process gets its own database (a temporary SQLite file, or a fresh PostgreSQL database dropped
at the end), migrated once; every test that uses `db` starts from empty tables with ids
restarting at 1.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import asyncpg
import certifi
import pytest
from tortoise import Tortoise, connections

from bridge.hermes_home import DEFAULT_CONFIG_YAML
from bridge.settings import BridgeSettings
from core.store import db as database
from tests.bridge.harness import RunningBridge, running_bridge
from tests.fakes.llm_server import ScriptedLLM

# What several test directories share lives in tests/support (a test module imports from there,
# never from another test module), its asserts rewritten as a test module's are. Its fixtures
# are plugins: any test takes them by name, and a conftest or test module that defines one of
# the same name overrides it below it. (pytest reads `pytest_plugins` in the root conftest only.)
pytest.register_assert_rewrite("tests.support")
pytest_plugins = [
    "tests.support.runtime",
    "tests.support.approvals",
    "tests.support.faults",
    "tests.support.slack",
    "tests.support.discord",
]

BACKEND = os.environ.get("HERMES_TEST_DB", "sqlite")
POSTGRES_ADMIN_URL = os.environ.get(
    "HERMES_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres"
)
LOOPBACK = {"127.0.0.1", "::1", "localhost"}


# Where the chat platforms, the admin API and the console are tested, what the store returns is
# what they check, whichever database holds it: their `db` tests run on SQLite only. A test there that
# does exercise the backend (replicas, shared budgets, locks and races, NOTIFY, shards, the SQL
# of paging or search) says so with `@pytest.mark.backend`, or reads BACKEND.
FRONT_ENDS = {"admin", "bots", "console", "security"}
TESTS = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that touches the database carries the `db` marker (set here for the `db`
    fixture); those whose outcome may depend on the backend also carry `backend` (run on
    PostgreSQL too): every `db` test outside FRONT_ENDS, and there those marked so or whose
    module reads BACKEND."""
    for item in items:
        if "db" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.db)
        if item.get_closest_marker("db") is None:
            continue
        area = item.path.relative_to(TESTS).parts[0] if item.path.is_relative_to(TESTS) else ""
        if area not in FRONT_ENDS or hasattr(getattr(item, "module", None), "BACKEND"):
            item.add_marker(pytest.mark.backend)


@pytest.fixture(scope="session", autouse=True)
def loopback_only() -> Iterator[None]:
    """Anything that tries a non-loopback address fails, and fails the session at the end
    even if a library swallowed the error."""
    original = socket.socket.connect
    attempts: list[object] = []

    def guarded(self: socket.socket, address: object) -> None:
        if isinstance(address, tuple) and address[0] not in LOOPBACK:
            attempts.append(address)
            raise OSError(f"test tried to reach the network: {address!r}")
        original(self, address)

    socket.socket.connect = guarded  # type: ignore[method-assign]
    yield
    socket.socket.connect = original  # type: ignore[method-assign]
    assert not attempts, f"outbound connections attempted: {attempts}"


@pytest.fixture(scope="session", autouse=True)
async def abandoned_generators_are_named() -> AsyncIterator[None]:
    """An async generator collected while it still runs (the task driving it was dropped) ends
    in asyncio's bare "aclose(): asynchronous generator is already running", which names
    nothing; this logs which generator it was, and where it was suspended."""
    loop: Any = asyncio.get_running_loop()
    finalizer = loop._asyncgen_finalizer_hook  # the loop installs it each time it runs
    probe = logging.getLogger("tests.asyncgen")
    probe.setLevel(logging.INFO)  # in a failing test's captured log, not a warning to assert on

    def named(generator: Any) -> None:
        frame = generator.ag_frame
        if frame is not None:  # unfinished: say which, so that a failing test's log shows it
            where = f"{frame.f_code.co_filename}:{frame.f_lineno}"
            stuck = generator.ag_running or generator.ag_await is not None  # aclose will fail
            probe.log(logging.ERROR if stuck else logging.INFO,
                      "async generator %s collected unclosed at %s (awaiting %r)",
                      generator.__qualname__, where, generator.ag_await)
        finalizer(generator)

    loop._asyncgen_finalizer_hook = named
    yield
    loop._asyncgen_finalizer_hook = finalizer


@pytest.fixture(scope="session", autouse=True)
def one_ca_certificate(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every TLS context this process (and a child it starts) makes trusts one CA instead of
    loading the whole bundle: no test talks TLS (`loopback_only`, plain HTTP), yet each httpx
    client makes a context, and hermes-agent several per new agent and one per LLM request,
    20 to 40 ms of CPU each: a third of the CPU of the platform tests on the real Bridge.
    HERMES_SKIP_SSL_GUARD skips hermes-agent's check of certifi's bundle, which loads it whole
    for each new agent."""
    bundle = Path(certifi.where()).read_text(encoding="ascii")
    end = "-----END CERTIFICATE-----"
    first = tmp_path_factory.mktemp("ca") / "first.pem"
    first.write_text(bundle[:bundle.index(end) + len(end)] + "\n", encoding="ascii")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SSL_CERT_FILE", str(first))
        patch.setenv("HERMES_SKIP_SSL_GUARD", "1")
        yield


@asynccontextmanager
async def new_database(folder: Path) -> AsyncIterator[str]:
    """The URL of an empty database of this run's backend, removed afterwards (a SQLite file
    in `folder`, or a PostgreSQL database of its own)."""
    if BACKEND == "sqlite":
        yield f"sqlite://{folder / 'test.sqlite3'}"
        return
    if BACKEND != "postgres":
        raise pytest.UsageError(f"HERMES_TEST_DB must be sqlite or postgres, not {BACKEND!r}")
    name = f"hermes_chat_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(POSTGRES_ADMIN_URL)
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


@pytest.fixture(scope="session")
async def database_url(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    """A database of this test process alone, removed afterwards."""
    async with new_database(tmp_path_factory.mktemp("db")) as url:
        yield url


@pytest.fixture(scope="session")
async def migrated_database(database_url: str) -> AsyncIterator[str]:
    """The test database with every migration applied and the ORM connected."""
    async with database.database(database_url):
        yield database_url


@pytest.fixture
async def db(migrated_database: str) -> AsyncIterator[str]:
    """Empty tables for this test (ids restart at 1); yields the database URL."""
    await _empty_tables()
    yield migrated_database


def tables() -> list[str]:
    """Every table of the data model, each before the tables it refers to (so deleting in this
    order never leaves a row pointing at a deleted one), read from the models themselves."""
    left = list(Tortoise.apps["hermes"].values())
    ordered: list[str] = []
    while left:
        free = [m for m in left if not any(o is not m and m in _targets(o) for o in left)]
        chosen = free or left  # only self-references (the message tree) are left
        ordered += [m._meta.db_table for m in chosen]
        left = [m for m in left if m not in chosen]
    return ordered


def _targets(model: type) -> set[type]:
    meta = model._meta  # type: ignore[attr-defined]
    return {meta.fields_map[name].related_model for name in (*meta.fk_fields, *meta.o2o_fields)}


async def _empty_tables() -> None:
    conn = connections.get("default")
    names = tables()
    if BACKEND == "postgres":
        await conn.execute_script(f"TRUNCATE {', '.join(names)} RESTART IDENTITY CASCADE")
        return
    await conn.execute_script("UPDATE chat_message SET parent_id = NULL")  # see delete_session
    for table in names:
        await conn.execute_script(f"DELETE FROM {table}")
    await conn.execute_script("DELETE FROM sqlite_sequence")


# One retry instead of three keeps "LLM down" tests fast; the rest is the Bridge's default.
TEST_CONFIG_YAML = DEFAULT_CONFIG_YAML + "agent:\n  api_max_retries: 1\n"


@pytest.fixture(scope="session")
def hermes_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("hermes-home")
    (home / "config.yaml").write_text(TEST_CONFIG_YAML, encoding="utf-8")
    return home


@pytest.fixture(scope="session")
def bridge_settings(hermes_home: Path) -> BridgeSettings:
    # Every Bridge in this process must share one HERMES_HOME (it is process-wide).
    return BridgeSettings(hermes_home=str(hermes_home), heartbeat_seconds=0.3)


@pytest.fixture(scope="session")
async def bridge(bridge_settings: BridgeSettings) -> AsyncIterator[RunningBridge]:
    async with running_bridge(bridge_settings) as running:
        yield running


@pytest.fixture
async def llm() -> AsyncIterator[ScriptedLLM]:
    async with ScriptedLLM() as server:
        yield server
