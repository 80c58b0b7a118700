"""What `serve` checks before it logs its first line: every start-up mistake becomes one
`StartupFailure` (hermes_chat/exits.py) naming the setting and the fix, never a traceback.

The admin port is bound here, before the database is migrated and the Bridge started, and the
bound socket handed to uvicorn: a port in use is found before anything says "listening", and no
other process can take the port in between.
"""

from __future__ import annotations

import errno
import socket
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
from tortoise.exceptions import DBConnectionError, OperationalError

from core.agent.catalogue import Catalogue, load_catalogue
from core.config import Settings
from core.errors import Conflict, HermesChatError
from core.store import db
from hermes_chat.exits import Exit, StartupFailure

# (setting that is set, settings it needs: any one of them, what each one is for)
TOKEN_PAIRS = (
    ("SLACK_BOT_TOKEN", ("SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN"),
     "set SLACK_SIGNING_SECRET (HTTP events) or SLACK_APP_TOKEN (Socket Mode)"),
    ("SLACK_SIGNING_SECRET", ("SLACK_BOT_TOKEN",), "set SLACK_BOT_TOKEN (xoxb-...)"),
    ("SLACK_APP_TOKEN", ("SLACK_BOT_TOKEN",), "set SLACK_BOT_TOKEN (xoxb-...)"),
)


def check_settings(settings: Settings) -> Catalogue:
    """Token pairs complete, MODELS_FILE readable, the SQLite folder writable; the catalogue."""
    check_token_pairs(settings)
    catalogue = read_catalogue(settings)
    check_data_folder(settings.database_url)
    return catalogue


def check_token_pairs(settings: Settings) -> None:
    """Half a platform's tokens would start nothing, silently: refused, naming the missing one."""
    for name, needs, fix in TOKEN_PAIRS:
        if _setting(settings, name) and not any(_setting(settings, n) for n in needs):
            raise StartupFailure(Exit.BAD_SETTING, f"{name} is set but {' or '.join(needs)} is "
                                 f"not: {fix}, or unset {name}")


def _setting(settings: Settings, name: str) -> bool:
    return bool(getattr(settings, name.lower()))


def read_catalogue(settings: Settings) -> Catalogue:
    """MODELS_FILE and SKILLS_DIR, or the one line that says what is wrong with the file."""
    try:
        return load_catalogue(settings.models_file, settings.skills_dir)
    except HermesChatError as error:
        raise StartupFailure(Exit.MODELS_FILE, f"MODELS_FILE: {error.message}; fix the file "
                             "or point MODELS_FILE at another") from None


def check_data_folder(database_url: str) -> None:
    """The SQLite database's folder exists (made if need be) and takes a new file."""
    if not db.is_sqlite(database_url):
        return
    folder = db.sqlite_path(database_url).parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".hermes-chat-check-"):
            pass
    except OSError as error:
        raise StartupFailure(Exit.DATA_UNWRITABLE, f"DATABASE_URL: cannot write the SQLite "
                             f"database's folder {folder} ({error.strerror or error}); make it "
                             "writable or point DATABASE_URL at another path") from None


def bind_admin_socket(settings: Settings) -> socket.socket:
    """ADMIN_HOST:ADMIN_PORT bound (uvicorn listens on it), or why it cannot be."""
    host, port = settings.admin_host, settings.admin_port
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as error:
        raise StartupFailure(Exit.BAD_SETTING, f"ADMIN_HOST {host!r} is not an address of this "
                             f"machine ({error.strerror}); set ADMIN_HOST to one (127.0.0.1, "
                             "0.0.0.0)") from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds its own
    try:
        sock.bind(address)
    except OSError as error:
        sock.close()
        raise _bind_failure(host, port, error) from None
    return sock


def _bind_failure(host: str, port: int, error: OSError) -> StartupFailure:
    where = f"{host}:{port}"
    if error.errno == errno.EADDRINUSE:
        return StartupFailure(Exit.PORT_IN_USE, f"ADMIN_PORT {port}: {where} is in use by "
                              "another process; stop it (is another serve running?) or set "
                              "another ADMIN_PORT")
    if error.errno == errno.EACCES:
        return StartupFailure(Exit.PORT_IN_USE, f"ADMIN_PORT {port}: not allowed to listen on "
                              f"{where}; set ADMIN_PORT above 1023")
    return StartupFailure(Exit.BAD_SETTING, f"ADMIN_HOST {host!r}: cannot listen on {where} "
                          f"({error.strerror}); set ADMIN_HOST to an address of this machine")


@asynccontextmanager
async def reaching_database(database_url: str) -> AsyncIterator[None]:
    """Around the first use of the database: unreachable, refused or in use is one line."""
    try:
        yield
    except Conflict as error:  # the SQLite lock: another serve already uses this file
        raise StartupFailure(Exit.ALREADY_RUNNING, error.message) from None
    except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError,
            DBConnectionError, OperationalError) as error:
        reason = " ".join(str(error).split()) or type(error).__name__
        raise StartupFailure(Exit.DATABASE_UNREACHABLE, f"DATABASE_URL: cannot reach "
                             f"{db.describe(database_url)} ({reason}); start the database or "
                             "fix DATABASE_URL") from None

