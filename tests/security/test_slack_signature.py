"""Requirement (issue #8 §5): "Slack signature and timestamp window". Every request Slack
sends (events, clicks, slash commands) on /slack/events is refused with 401 unless it carries
a valid v0 signature made within 5 minutes, and a refused request starts nothing.

Already covered elsewhere and left there: tests/bots/slack/test_live.py
test_a_bad_signature_is_refused_with_401 (one forged event, one stale event)."""

from __future__ import annotations

import logging
import time

import pytest

from bots.slack.http import LIKELY_CAUSE
from core.store.models import ChatMessage, ConversationBinding, Role
from core.runtime.pool import RunPool
from tests.bots.slack.clocks import SteppedClock
from tests.bots.slack.harness import SECRET, Harness, running
from tests.fakes.slack import FakeSlack
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.fakes.slack_payloads import (
    CHANNEL_ID,
    SignedRequest,
    command_request,
    event_request,
    interaction_request,
    make_block_action,
    make_slack_event,
    make_slash_command,
    sign_request,
)

pytestmark = pytest.mark.slack_http  # the HTTP path itself: served by uvicorn

WINDOW = 5 * 60  # seconds Slack's verification allows between signing and receiving
MARGIN = 5  # stamps are whole seconds: keep clear of the edge a second tick would cross


def _mention() -> SignedRequest:
    return event_request(make_slack_event("app_mention", text="start something"), SECRET)


def _forged(request: SignedRequest, **changes: str | None) -> dict[str, str]:
    headers = {**request.headers, **changes}
    return {k: v for k, v in headers.items() if v is not None}


async def _nothing_started(h: Harness, llm: ScriptedLLM) -> None:
    await h.bot.idle()
    assert await ChatMessage.all().count() == 0
    assert await ConversationBinding.all().count() == 0
    assert llm.requests == [] and h.slack.workspace.messages == {}
    assert h.slack.workspace.ephemerals == []


def _every_kind(stamp: int, secret: str = SECRET) -> list[SignedRequest]:
    """An event, a click and a slash command, signed with `secret` at `stamp`."""
    return [
        event_request(make_slack_event("app_mention", text="hi"), secret, timestamp=stamp),
        interaction_request(make_block_action("hermes.answer.regenerate", "1"), secret, timestamp=stamp),
        command_request(make_slash_command("/hermes", "new"), secret, timestamp=stamp),
    ]


@pytest.mark.parametrize("kind", ["event", "click", "command"])
async def test_a_wrong_signature_is_401_for_every_kind_of_request(
    h: Harness, llm: ScriptedLLM, kind: str
) -> None:
    kinds = _every_kind(int(time.time()), "not-the-secret")
    request = dict(zip(("event", "click", "command"), kinds, strict=True))[kind]
    response = await h.http.post("/slack/events", content=request.body, headers=request.headers)
    assert response.status_code == 401
    await _nothing_started(h, llm)


@pytest.mark.parametrize("age", [WINDOW + MARGIN, 3600, -(WINDOW + MARGIN)], ids=["stale", "an-hour", "future"])
async def test_a_valid_signature_outside_the_5_minute_window_is_401(
    h: Harness, llm: ScriptedLLM, age: int
) -> None:
    for request in _every_kind(int(time.time()) - age):
        response = await h.http.post("/slack/events", content=request.body, headers=request.headers)
        assert response.status_code == 401
    await _nothing_started(h, llm)


async def test_a_request_signed_inside_the_window_is_served(h: Harness, llm: ScriptedLLM) -> None:
    llm.script(text_reply("on time"))
    payload = make_slack_event("app_mention", text="still fresh")
    request = event_request(payload, SECRET, timestamp=int(time.time()) - (WINDOW - 60))
    response = await h.http.post("/slack/events", content=request.body, headers=request.headers)
    assert response.status_code == 200
    await h.answered(CHANNEL_ID, payload["event"]["ts"])


async def test_a_replayed_request_is_refused_once_old_and_never_runs_twice(
    h: Harness, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("once"), text_reply("twice?"))
    payload = make_slack_event("app_mention", text="pay me")
    signed_at = int(time.time())
    original = event_request(payload, SECRET, timestamp=signed_at)
    assert (await h.http.post("/slack/events", content=original.body,
                              headers=original.headers)).status_code == 200
    await h.answered(CHANNEL_ID, payload["event"]["ts"])
    # The same bytes and headers again, at once: valid, but the event was seen; nothing new.
    assert (await h.http.post("/slack/events", content=original.body,
                              headers=original.headers)).status_code == 200
    # Captured and replayed later: what a replay looks like to the verifier is an old stamp.
    replay = SignedRequest(original.body, {**original.headers,
                                           **sign_request(original.body, SECRET, signed_at - WINDOW - MARGIN)})
    assert (await h.http.post("/slack/events", content=replay.body,
                              headers=replay.headers)).status_code == 401
    # The old signature with a fresh stamp does not verify either: the stamp is signed.
    restamped = _forged(original, **{"X-Slack-Request-Timestamp": str(int(time.time()) + 1)})
    assert (await h.http.post("/slack/events", content=original.body,
                              headers=restamped)).status_code == 401
    await h.bot.idle()
    assert await ChatMessage.filter(role=Role.USER).count() == 1 and len(llm.requests) == 1


@pytest.mark.parametrize(
    "changes",
    [
        {"X-Slack-Signature": None},
        {"X-Slack-Request-Timestamp": None},
        {"X-Slack-Signature": None, "X-Slack-Request-Timestamp": None},
        {"X-Slack-Signature": ""},
        {"X-Slack-Signature": "v1=" + "0" * 64},
        {"X-Slack-Request-Timestamp": ""},
        {"X-Slack-Request-Timestamp": "yesterday"},
        {"X-Slack-Request-Timestamp": "-1"},
    ],
    ids=["no-signature", "no-timestamp", "neither", "empty-signature", "other-version",
         "empty-timestamp", "not-a-number", "negative"],
)
async def test_missing_or_malformed_headers_are_401(
    h: Harness, llm: ScriptedLLM, changes: dict[str, str | None]
) -> None:
    request = _mention()
    response = await h.http.post("/slack/events", content=request.body,
                                 headers=_forged(request, **changes))
    assert response.status_code == 401
    await _nothing_started(h, llm)


async def test_a_body_that_is_not_utf8_is_401_not_500(h: Harness, llm: ScriptedLLM) -> None:
    body = b"payload=\xff\xfe"
    headers = {"Content-Type": "application/x-www-form-urlencoded", **sign_request(body, SECRET)}
    response = await h.http.post("/slack/events", content=body, headers=headers)
    assert response.status_code == 401
    await _nothing_started(h, llm)


async def test_a_refused_request_leaves_its_text_out_of_the_log(
    h: Harness, llm: ScriptedLLM, caplog: pytest.LogCaptureFixture
) -> None:
    """The refusal is logged (bolt would log it with its body, at INFO); the message text is
    not."""
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="slack_bolt.RequestVerification")  # set from root at start
    text = "a confidential roadmap for 2027"
    request = event_request(make_slack_event("app_mention", text=text), "not-the-secret")
    response = await h.http.post("/slack/events", content=request.body, headers=request.headers)
    assert response.status_code == 401
    assert _warnings(caplog)
    assert not [r for r in caplog.records if "roadmap" in r.getMessage()]
    await _nothing_started(h, llm)


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == "bots.slack.http" and r.levelno == logging.WARNING]


async def test_a_wrong_signing_secret_is_a_warning_with_its_likely_cause_once_a_minute(
    fake_slack: FakeSlack, fake_pool: RunPool, caplog: pytest.LogCaptureFixture
) -> None:
    """An operator whose SLACK_SIGNING_SECRET is wrong sees why Slack's requests are refused,
    and how many, without one line per request."""
    caplog.set_level(logging.INFO)
    clock = SteppedClock()

    async def refused(h: Harness, stamp: int | None = None, secret: str = "not-the-secret") -> None:
        request = event_request(make_slack_event("app_mention", text="hi"), secret, timestamp=stamp)
        response = await h.http.post("/slack/events", content=request.body, headers=request.headers)
        assert response.status_code == 401 and response.json() == {"error": "invalid request"}

    async with running(fake_slack, fake_pool, clock, over_http=True) as h:
        for _ in range(3):
            await refused(h)
        [first] = _warnings(caplog)
        assert first.startswith("slack: refused 1 request to /slack/events (401, signature not valid)")
        assert LIKELY_CAUSE in first and "within the 5 minutes" in first
        clock.advance(59)
        await refused(h)
        assert len(_warnings(caplog)) == 1
        clock.advance(1)
        await refused(h, stamp=int(time.time()) - 600, secret=SECRET)  # the right secret, stale
        [_, second] = _warnings(caplog)
        assert second.startswith("slack: refused 4 requests to /slack/events (401, signature not valid) "
                                 "in the last 60 s")
        assert "outside the 5 minutes" in second
        await h.bot.idle()
        assert await ChatMessage.all().count() == 0 and fake_slack.workspace.messages == {}
