"""Every shape Slack sends, signed, into the running bot's route (real slack-bolt, the fake
Slack; over real HTTP where the HTTP path itself is tested): what the product uses is
handled, the rest acknowledged (200, logged once at debug), never a 5xx, a 404 or a
traceback. A hypothesis test mutates real-shaped events, interactions and commands (fields
missing, null, of another type, extra)."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bots.slack import ids
from core.chat import tree
from core.store.models import ChatMessage, Role
from tests.bots.slack.harness import SECRET, Harness, texts
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.fakes.slack_payloads import (
    CHANNEL_ID,
    DM_CHANNEL_ID,
    USER_ID,
    command_request,
    event_request,
    interaction_request,
    make_block_action,
    make_slack_event,
    make_slash_command,
    make_view_submission,
    new_ts,
    sign_request,
)
from tests.payload_mutations import ANY_VALUE, mutate

Payload = dict[str, Any]


def failures(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Records that say something broke: ERROR or worse, or any with a traceback."""
    return [f"{r.name}: {r.getMessage()}" for r in caplog.records
            if r.levelno >= logging.ERROR or r.exc_info]


async def test_an_edit_whose_message_has_no_ts_is_answered_in_a_new_branch(
    h: Harness, llm: ScriptedLLM, caplog: pytest.LogCaptureFixture
) -> None:
    """The issue's example: the edited `message` carries no ts (it is on the event and on
    `previous_message`); it was HTTP 500 with KeyError: 'ts', three retries and tracebacks."""
    llm.script(text_reply("Three."), text_reply("Four."))
    mention = await h.event("app_mention", text="what is 1+2?")
    thread = mention["ts"]
    await h.answered(CHANNEL_ID, thread)
    payload = make_slack_event("message_changed", text="<@U0BOT> what is 2+2?", message_ts=thread,
                               previous_text=mention["text"])
    del payload["event"]["message"]["ts"]
    response = await h.post_event(payload)
    assert (response.status_code, response.text) == (200, "")
    answers = await h.answered(CHANNEL_ID, thread, count=2)
    assert "Four." in texts(answers[1])
    users = await ChatMessage.filter(role=Role.USER).order_by("id")
    assert [u.content for u in users] == ["what is 1+2?", "what is 2+2?"]
    assert [v.id for v in await tree.versions(users[1].id)] == [users[0].id, users[1].id]
    assert not failures(caplog)


def message_deleted() -> Payload:
    return make_slack_event({"type": "message", "subtype": "message_deleted", "hidden": True,
                             "channel": CHANNEL_ID, "ts": new_ts(), "deleted_ts": "1650000000.1",
                             "previous_message": {"type": "message", "user": USER_ID,
                                                  "ts": "1650000000.1", "text": "gone"}})


def subtype(name: str, **fields: Any) -> Payload:
    return make_slack_event({"type": "message", "subtype": name, "channel": CHANNEL_ID,
                             "channel_type": "channel", "ts": new_ts(), **fields})


IGNORED_EVENTS = {
    "message_deleted": message_deleted,
    "bot_message": lambda: subtype("bot_message", bot_id="B0OTHER", text="beep", username="ci"),
    "me_message": lambda: subtype("me_message", user=USER_ID, text="waves"),
    "channel_join": lambda: subtype("channel_join", user=USER_ID, text="<@U0USER> has joined"),
    "reaction_added": lambda: make_slack_event({"type": "reaction_added", "user": USER_ID,
                                                "reaction": "+1", "event_ts": new_ts(),
                                                "item": {"type": "message", "channel": CHANNEL_ID,
                                                         "ts": "1650000000.1"}}),
    "member_joined_channel": lambda: make_slack_event({"type": "member_joined_channel",
                                                       "user": USER_ID, "channel": DM_CHANNEL_ID}),
    "event is a string": lambda: {**make_slack_event("app_mention"), "event": "?"},
    "user is a number": lambda: make_slack_event("app_mention", user=7),  # type: ignore[arg-type]
}
IGNORED_INTERACTIONS = {
    "view_closed": {"type": "view_closed", "team": {"id": "T0FAKE"}, "user": {"id": USER_ID},
                    "view": {"id": "V1", "callback_id": ids.CUSTOM_ANSWER_VIEW}, "is_cleared": False},
    "block_suggestion": {"type": "block_suggestion", "user": {"id": USER_ID}, "team": {"id": "T0FAKE"},
                         "action_id": "hermes.pick", "block_id": "b", "value": "ab"},
    "interactive_message": {"type": "interactive_message", "callback_id": "legacy", "actions": [],
                            "team": {"id": "T0FAKE"}, "user": {"id": USER_ID}},
    "block_actions with no actions": {**make_block_action("x"), "actions": []},
    "a link button of another app": make_block_action("open-docs", "https://example.org"),
    "a button of ours this version no longer has": make_block_action("hermes.retired", "1"),
    "a modal of another app": make_view_submission("another.app"),
}


@pytest.mark.parametrize("name", IGNORED_EVENTS)
async def test_events_the_product_does_not_use_are_acknowledged(
    fh: Harness, caplog: pytest.LogCaptureFixture, name: str
) -> None:
    caplog.set_level(logging.DEBUG, logger="bots.slack")
    response = await fh.post_event(IGNORED_EVENTS[name]())
    assert (response.status_code, response.text) == (200, "")
    await fh.bot.idle()
    assert not failures(caplog) and "Unhandled request" not in caplog.text
    assert "slack: ignored" in caplog.text or "slack-bolt cannot read" in caplog.text
    assert not fh.slack.workspace.ephemerals and not await ChatMessage.all().count()


@pytest.mark.parametrize("name", IGNORED_INTERACTIONS)
async def test_interactions_the_product_does_not_use_are_acknowledged(
    fh: Harness, caplog: pytest.LogCaptureFixture, name: str
) -> None:
    caplog.set_level(logging.DEBUG, logger="bots.slack")
    response = await fh.interact(IGNORED_INTERACTIONS[name])
    assert response.text == ""
    await fh.bot.idle()
    assert not failures(caplog) and "Unhandled request" not in caplog.text


@pytest.mark.slack_http
async def test_a_body_bolt_cannot_read_is_acknowledged_only_when_signed(fh: Harness) -> None:
    payload = {**make_slack_event("app_mention"), "authorizations": [7]}
    signed = event_request(payload, SECRET)
    assert (await fh.http.post("/slack/events", content=signed.body, headers=signed.headers)).status_code == 200
    forged = event_request(payload, "another secret")
    refused = await fh.http.post("/slack/events", content=forged.body, headers=forged.headers)
    assert (refused.status_code, refused.json()) == (401, {"error": "invalid request"})
    body = event_request(payload, SECRET).body[:-1]  # JSON that does not end, signed as it is
    headers = {"Content-Type": "application/json", **sign_request(body, SECRET)}
    assert (await fh.http.post("/slack/events", content=body, headers=headers)).status_code == 200


# --- hypothesis: real shapes, mutated ------------------------------------------------


def real_shapes() -> list[tuple[str, Payload]]:
    """One of each payload the bot reads or may be sent, as Slack sends it."""
    thread = "1650000000.000001"
    modal_click = {**make_block_action(ids.THINKING_NEXT, "1:1"), "container": {"type": "view", "view_id": "V1"},
                   "view": {"id": "V1", "type": "modal", "team_id": "T0FAKE"}}
    home_click = {**modal_click, "view": {"id": "V2", "type": "home", "team_id": "T0FAKE"}}
    ephemeral = {**make_block_action(ids.STOP, "run-1"),
                 "container": {"type": "message", "message_ts": "1.2", "channel_id": CHANNEL_ID,
                               "is_ephemeral": True}}
    ephemeral.pop("message")
    return [
        ("event", make_slack_event("app_mention", text="hello")),
        ("event", make_slack_event("thread_message", thread_ts=thread)),
        ("event", make_slack_event("dm", text="hi")),
        ("event", make_slack_event("message_changed", text="new", message_ts=thread, previous_text="old")),
        ("event", subtype("file_share", user=USER_ID, text="", thread_ts=thread,
                          files=[{"id": "F1", "name": "a.txt"}])),
        ("event", subtype("thread_broadcast", user=USER_ID, text="all", thread_ts=thread)),
        ("event", message_deleted()),
        *[("event", factory()) for factory in list(IGNORED_EVENTS.values())[1:6]],
        ("interaction", make_block_action(ids.REGENERATE, "1", message_ts="1.2", thread_ts=thread)),
        ("interaction", make_block_action(ids.PREVIOUS, "2:1", message_ts="1.2", thread_ts=thread)),
        ("interaction", make_block_action(ids.choice_action(0), "1:0", thread_ts=thread)),
        ("interaction", make_block_action(ids.CLARIFY_CUSTOM, "1", thread_ts=thread)),
        ("interaction", make_block_action(ids.SHOW_SUMMARY, "1")),
        ("interaction", make_block_action(ids.SET_MODEL, action_type="static_select",
                                          selected_option={"value": "1:fast"})),
        ("interaction", modal_click), ("interaction", home_click), ("interaction", ephemeral),
        ("interaction", make_view_submission(ids.CUSTOM_ANSWER_VIEW, {"answer": {"text": "mine"}},
                                             private_metadata="1")),
        *[("interaction", p) for p in IGNORED_INTERACTIONS.values()],
        ("command", make_slash_command("/hermes", "status")),
        ("command", make_slash_command("/hermes", "model")),
    ]


SHAPES = real_shapes()
VALUES = ANY_VALUE | st.sampled_from(["hermes.run.stop", USER_ID, "1.2"])


def request_of(kind: str, payload: Payload) -> tuple[bytes, dict[str, str]]:
    if kind == "event":
        signed = event_request(payload, SECRET)
    elif kind == "interaction":
        signed = interaction_request(payload, SECRET)
    else:
        signed = command_request({str(k): str(v) for k, v in payload.items()}, SECRET)
    return signed.body, signed.headers


@pytest.mark.slack_http
async def test_mutated_slack_payloads_never_get_a_5xx_or_a_traceback(
    fh: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """Runs that a mutated mention starts are on the fake Bridge, whose default script ends
    each at once; after each request the test waits for the work it started."""
    loop = asyncio.get_running_loop()
    url = str(fh.http.base_url)

    def idle() -> None:
        asyncio.run_coroutine_threadsafe(fh.bot.idle(), loop).result(timeout=30)

    @settings(max_examples=80, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(shape=st.sampled_from(SHAPES), data=st.data())
    def posted(shape: tuple[str, Payload], data: st.DataObject) -> None:
        kind, payload = shape
        mutated = mutate(payload, data, st.text(max_size=6) if kind == "command" else VALUES)
        body, headers = request_of(kind, mutated)
        seen = len(caplog.records)
        with httpx.Client(base_url=url, timeout=30) as http:
            response = http.post("/slack/events", content=body, headers=headers)
        idle()
        broken = [f"{r.name}: {r.getMessage()}" for r in caplog.records[seen:]
                  if r.levelno >= logging.ERROR or r.exc_info]
        assert response.status_code < 500 and response.status_code != 404, (response.status_code, mutated)
        assert not broken, (broken, json.dumps(mutated)[:2000])

    await asyncio.to_thread(posted)
