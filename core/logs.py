"""Process-wide logging set-up from LOG_LEVEL and LOG_FORMAT (text, or one JSON object a line),
with the service's own secrets (tokens, API keys) blanked out of every line written."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from datetime import datetime, UTC

REDACTED = "[redacted]"
MIN_SECRET = 6  # a shorter value is no secret, and blanking it would garble every line
# The service's own packages log at LOG_LEVEL; every other logger (the libraries': hermes-
# agent's plugin discovery, uvicorn's banners, the scheduler's jobs, the ORM, the platform
# clients' log-in and session lines, one line per HTTP request) at WARNING, unless LOG_LEVEL
# is DEBUG. Bolt copies the root logger's level onto each logger it makes, so the root is
# where the rule is set.
OWN_PACKAGES = ("hermes_chat", "core", "bots", "bridge", "admin", "bench")
# ... and these by name as well: hermes-agent lowers the root logger to INFO for its own log
# files when it builds an agent, which would let them back into a Bridge process's stream.
QUIET_LIBRARIES = ("hermes_cli", "run_agent", "uvicorn.error", "uvicorn.access", "httpx")


class JsonFormatter(logging.Formatter):
    """One JSON object per record, with any `extra=` fields such as run_id and session_id."""

    _standard = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message"}

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "at": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update({k: v for k, v in record.__dict__.items() if k not in self._standard})
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


class RedactingFormatter(logging.Formatter):
    """Formats with `inner`, then blanks each secret out of the whole line (message, extras,
    traceback alike): libraries log what they please, and an LLM provider may echo a key back
    in the error the agent logs."""

    def __init__(self, inner: logging.Formatter, secrets: Iterable[str]) -> None:
        super().__init__()
        self._inner = inner
        kept = {s for s in secrets if len(s) >= MIN_SECRET}
        # As JSON writes them too, longest first so no secret is left half-blanked.
        self._secrets = sorted(kept | {json.dumps(s)[1:-1] for s in kept}, key=len, reverse=True)

    def format(self, record: logging.LogRecord) -> str:
        line = self._inner.format(record)
        for secret in self._secrets:
            line = line.replace(secret, REDACTED)
        return line


def quiet_level(level: str) -> str:
    """LOG_LEVEL for a process that writes warnings and errors only (the child Bridge, whose
    start and exits `serve` reports; a terminal conversation): WARNING, unless `level` asks
    for more (DEBUG) or for less (ERROR, CRITICAL)."""
    return level if level.upper() in ("DEBUG", "ERROR", "CRITICAL") else "WARNING"


def configure_logging(level: str = "INFO", format: str = "text", secrets: Iterable[str] = (),
                      own: Iterable[str] = OWN_PACKAGES,
                      quiet: Iterable[str] = QUIET_LIBRARIES) -> None:
    """Install one handler on the root logger (called once, by the command being run); no
    value of `secrets` is ever written. The `own` loggers write at `level`, every other one
    warnings and errors only, unless `level` is DEBUG."""
    handler = logging.StreamHandler()
    inner = JsonFormatter() if format == "json" else logging.Formatter(
        "%(asctime)s %(levelname)s %(name)s: %(message)s")
    handler.setFormatter(RedactingFormatter(inner, secrets))
    root = logging.getLogger()
    root.setLevel(level.upper())  # a level logging does not know is a ValueError here
    wanted = root.level
    # On the handler too: hermes-agent lowers the root logger's level (see QUIET_LIBRARIES).
    handler.setLevel(wanted)
    libraries = wanted if wanted <= logging.DEBUG else max(wanted, logging.WARNING)
    root.handlers[:] = [handler]
    root.setLevel(libraries)
    for name in own:
        logging.getLogger(name).setLevel(wanted)
    for name in quiet:
        logging.getLogger(name).setLevel(logging.NOTSET if wanted <= logging.DEBUG else libraries)
