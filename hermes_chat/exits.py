"""The exit codes of `hermes-chat`, in one table (docs/operations.md lists them), and
`StartupFailure`: a mistake found before a command could start, said in one line.

A start-up mistake names the setting and the fix and exits with its own code, so a script or
a supervisor (systemd's `RestartPreventExitStatus=`) can tell a bad setting, which no restart
fixes, from a database that is not up yet, which one may."""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    """Why `hermes-chat` exited."""

    OK = 0
    FAILED = 1  # an error after start-up; the log says what and why
    BAD_SETTING = 2  # a setting that cannot work (DATABASE_URL, ADMIN_HOST, half a token pair)
    DATABASE_UNREACHABLE = 3  # DATABASE_URL names a database that does not answer
    PORT_IN_USE = 4  # ADMIN_PORT is taken by another process (or not ours to take)
    MODELS_FILE = 5  # MODELS_FILE cannot be read, or is not a valid catalogue
    DATA_UNWRITABLE = 6  # the SQLite database's folder cannot be written
    ALREADY_RUNNING = 7  # another `serve` already uses this SQLite database
    INTERRUPTED = 130  # Ctrl-C before the service was up (128 + SIGINT, as shells report it)


class StartupFailure(Exception):
    """What stops a command before it starts: `main` prints `message` and exits `code`."""

    def __init__(self, code: Exit, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
