"""What people are told of an outage: plain words, whatever the error says for the log."""

from __future__ import annotations

import logging

import pytest

from core.conversation.refusals import BRIDGE_DOWN, log_refusal, refusal_text
from core.errors import BridgeUnavailable, InvalidInput, RunLost

DETAILED = ("the Hermes Bridge answered 503 Service Unavailable to POST /runs/r1/approval: "
            "overloaded")


def test_an_outage_is_told_in_plain_words_and_logged_in_full(
    caplog: pytest.LogCaptureFixture,
) -> None:
    error = BridgeUnavailable(DETAILED)
    assert refusal_text(error) == BRIDGE_DOWN and error.public == BridgeUnavailable.PUBLIC
    with caplog.at_level(logging.INFO):
        log_refusal(logging.getLogger("tests.refusals"), error, "approval click")
    [record] = caplog.records
    assert record.levelno == logging.WARNING and DETAILED in record.getMessage()


def test_a_run_lost_too_often_fails_in_plain_words() -> None:
    lost = RunLost("the Bridge http://10.0.0.7:18731 holding it went away: " + DETAILED)
    assert lost.public == RunLost.PUBLIC and "10.0.0.7" not in refusal_text(lost)


def test_other_refusals_say_what_they_say() -> None:
    assert refusal_text(InvalidInput("unknown model 'x'")) == "✋ Unknown model 'x'"
