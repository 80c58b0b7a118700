"""JSON logs carry the run and session ids given as `extra`; the stream keeps its level and
libraries' chatter stays out of it below DEBUG."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest

from core.logs import OWN_PACKAGES, QUIET_LIBRARIES, JsonFormatter, configure_logging


def test_a_json_line_has_the_message_level_and_extras() -> None:
    record = logging.LogRecord("core.runtime", logging.WARNING, __file__, 1, "run failed: %s",
                               ("boom",), None)
    record.run_id, record.session_id = "r1", 7
    entry = json.loads(JsonFormatter().format(record))
    assert entry["message"] == "run failed: boom" and entry["level"] == "WARNING"
    assert (entry["run_id"], entry["session_id"], entry["logger"]) == ("r1", 7, "core.runtime")


@pytest.fixture
def logging_restored() -> Iterator[None]:
    """The root logger and the quiet libraries as they were before the test configured them."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    names = (*OWN_PACKAGES, *QUIET_LIBRARIES, "slack_bolt.AsyncApp")
    levels = {name: logging.getLogger(name).level for name in names}
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, saved in levels.items():
        logging.getLogger(name).setLevel(saved)


def test_the_stream_keeps_its_level_when_a_library_lowers_the_root(
        logging_restored: None, capsys: pytest.CaptureFixture[str]) -> None:
    """hermes-agent sets the root logger to INFO for its own files when it builds an agent."""
    configure_logging("WARNING")
    logging.getLogger().setLevel(logging.INFO)
    logging.getLogger("bridge").info("an INFO line")
    logging.getLogger("bridge").warning("a warning")
    written = capsys.readouterr().err
    assert "a warning" in written and "an INFO line" not in written


@pytest.mark.parametrize("name", [*QUIET_LIBRARIES, "apscheduler.scheduler", "tortoise",
                                  "discord.gateway", "a.library.we.never.heard.of"])
def test_library_chatter_is_quiet_at_info_and_back_at_debug(
        name: str, logging_restored: None) -> None:
    """By level (uvicorn may have given its loggers handlers of their own in this process)."""
    library = logging.getLogger(f"{name}.part")
    configure_logging("INFO")
    assert not library.isEnabledFor(logging.INFO) and library.isEnabledFor(logging.WARNING)
    configure_logging("DEBUG")
    assert library.isEnabledFor(logging.INFO)


@pytest.mark.parametrize("name", OWN_PACKAGES)
def test_our_own_lines_keep_log_level(name: str, logging_restored: None) -> None:
    configure_logging("INFO")
    assert logging.getLogger(f"{name}.part").isEnabledFor(logging.INFO)
    configure_logging("ERROR")
    assert not logging.getLogger(f"{name}.part").isEnabledFor(logging.WARNING)


def test_a_logger_made_with_the_root_level_is_quiet_too(logging_restored: None) -> None:
    """slack-bolt copies the root logger's level onto every logger it makes."""
    configure_logging("INFO")
    bolt = logging.getLogger("slack_bolt.AsyncApp")
    bolt.level = logging.root.level
    assert not bolt.isEnabledFor(logging.INFO) and bolt.isEnabledFor(logging.WARNING)
