"""JSON logs carry the run and session ids given as `extra`."""

from __future__ import annotations

import json
import logging

from core.logs import JsonFormatter


def test_a_json_line_has_the_message_level_and_extras() -> None:
    record = logging.LogRecord("core.runtime", logging.WARNING, __file__, 1, "run failed: %s",
                               ("boom",), None)
    record.run_id, record.session_id = "r1", 7
    entry = json.loads(JsonFormatter().format(record))
    assert entry["message"] == "run failed: boom" and entry["level"] == "WARNING"
    assert (entry["run_id"], entry["session_id"], entry["logger"]) == ("r1", 7, "core.runtime")
