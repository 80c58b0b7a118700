"""The typed parse of what Slack sends (pure, no event loop): every variant of a field
(missing, null, of another type) and every subtype or payload type reads as a typed value
or as Ignored, never an exception; and `bolt_can_read` refuses the shapes slack-bolt itself
cannot build a request of."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from slack_bolt.request.async_request import AsyncBoltRequest

from bots.slack.inbound import (
    Click,
    Ignored,
    MessageEdit,
    HomeOpened,
    MessageEvent,
    SlashCommand,
    ViewSubmission,
    bolt_can_read,
    edited,
    incoming,
    parse,
)
from tests.fakes.slack_payloads import (
    BOT_USER_ID,
    CHANNEL_ID,
    TEAM_ID,
    USER_ID,
    make_block_action,
    make_slack_event,
    make_slash_command,
    make_view_submission,
)

Payload = dict[str, Any]
OTHER_TYPES: tuple[Any, ...] = (None, 7, 1.5, True, [], ["x"], {}, {"id": "x"}, "")


def changed(**fields: Any) -> Payload:
    return make_slack_event("message_changed", text="new words", message_ts="1650000000.000100",
                            previous_text="old words", **fields)


def without(payload: Payload, *path: str) -> Payload:
    """`payload` less the field at `path` (into nested objects)."""
    copied = copy.deepcopy(payload)
    inner = copied
    for key in path[:-1]:
        inner = inner[key]
    del inner[path[-1]]
    return copied


def with_value(payload: Payload, path: tuple[str, ...], value: Any) -> Payload:
    copied = copy.deepcopy(payload)
    inner = copied
    for key in path[:-1]:
        inner = inner[key]
    inner[path[-1]] = value
    return copied


# --- messages ------------------------------------------------------------------------


def test_a_mention_and_a_thread_message_are_typed() -> None:
    mention = parse(make_slack_event("app_mention", text="hi", thread_ts="1650000000.000001"))
    assert isinstance(mention, MessageEvent)
    assert (mention.kind, mention.team, mention.channel, mention.user) == (
        "app_mention", TEAM_ID, CHANNEL_ID, USER_ID)
    assert mention.thread_ts == "1650000000.000001" and mention.text == f"<@{BOT_USER_ID}> hi"
    assert incoming(mention, BOT_USER_ID).text == "hi"
    reply = parse(make_slack_event("thread_message", thread_ts="1650000000.000001"))
    assert isinstance(reply, MessageEvent) and reply.kind == "message"


@pytest.mark.parametrize("subtype", ["file_share", "thread_broadcast"])
def test_subtypes_a_user_posts_with_are_messages(subtype: str) -> None:
    event = make_slack_event("thread_message", thread_ts="1650000000.000001")
    event["event"]["subtype"] = subtype
    assert isinstance(parse(event), MessageEvent)


@pytest.mark.parametrize("subtype", [
    "message_deleted", "bot_message", "me_message", "channel_join", "channel_leave",
    "channel_topic", "thread_broadcast_deleted", "never-seen-before", 7, [], {},
])
def test_other_message_subtypes_are_ignored(subtype: Any) -> None:
    event = make_slack_event("thread_message", thread_ts="1650000000.000001")
    event["event"]["subtype"] = subtype
    if subtype == "message_deleted":  # as Slack sends it: the message is gone
        event["event"] = {"type": "message", "subtype": "message_deleted", "hidden": True,
                          "channel": CHANNEL_ID, "ts": "1.2", "deleted_ts": "1.1",
                          "previous_message": {"type": "message", "user": USER_ID, "ts": "1.1"}}
    assert isinstance(parse(event), Ignored)


@pytest.mark.parametrize("field", ["user", "ts", "channel"])
@pytest.mark.parametrize("value", OTHER_TYPES)
def test_a_message_without_a_usable_user_ts_or_channel_is_ignored(field: str, value: Any) -> None:
    event = make_slack_event("app_mention")
    assert isinstance(parse(with_value(event, ("event", field), value)), Ignored)
    assert isinstance(parse(without(event, "event", field)), Ignored)


@pytest.mark.parametrize("field", ["text", "thread_ts", "channel_type", "event_ts"])
@pytest.mark.parametrize("value", OTHER_TYPES)
def test_optional_message_fields_of_any_type_read_as_absent(field: str, value: Any) -> None:
    event = with_value(make_slack_event("thread_message", thread_ts="1.1"), ("event", field), value)
    parsed = parse(event)
    assert isinstance(parsed, MessageEvent)
    assert isinstance(parsed.text, str) and isinstance(incoming(parsed, BOT_USER_ID).text, str)


def test_a_bots_message_is_ignored() -> None:
    event = make_slack_event("thread_message", thread_ts="1.1")
    event["event"]["bot_id"] = "B0OTHER"
    assert isinstance(parse(event), Ignored)


# --- edits ---------------------------------------------------------------------------


def test_an_edit_reads_the_new_text_of_the_message() -> None:
    edit = parse(changed())
    assert isinstance(edit, MessageEdit)
    assert (edit.ts, edit.user, edit.text, edit.previous_text) == (
        "1650000000.000100", USER_ID, "new words", "old words")
    message = edited(edit, BOT_USER_ID)
    assert message is not None and (message.ts, message.text) == ("1650000000.000100", "new words")


def test_an_edit_whose_message_has_no_ts_is_recognised_from_previous_message() -> None:
    """The issue's example: Slack's SDK tests send message_changed with the ts on the event
    and on previous_message only (it was a KeyError, and HTTP 500)."""
    edit = parse(without(changed(), "event", "message", "ts"))
    assert isinstance(edit, MessageEdit) and edit.ts == "1650000000.000100"
    assert edited(edit, BOT_USER_ID) is not None


def test_an_edit_takes_its_channel_and_author_from_where_slack_put_them() -> None:
    payload = without(without(changed(), "event", "channel"), "event", "message", "user")
    payload["event"]["message"]["channel"] = CHANNEL_ID
    edit = parse(payload)
    assert isinstance(edit, MessageEdit)
    assert (edit.channel, edit.user) == (CHANNEL_ID, USER_ID)  # the author from previous_message


@pytest.mark.parametrize("path", [
    ("event", "message"), ("event", "previous_message"), ("event", "channel"), ("event", "ts"),
    ("event", "event_ts"), ("event", "message", "user"), ("event", "message", "text"),
    ("event", "message", "edited"), ("event", "previous_message", "ts"),
])
@pytest.mark.parametrize("value", OTHER_TYPES)
def test_an_edit_of_any_shape_is_typed_or_ignored(path: tuple[str, ...], value: Any) -> None:
    for payload in (with_value(changed(), path, value), without(changed(), *path)):
        parsed = parse(payload)
        assert isinstance(parsed, MessageEdit | Ignored)
        if isinstance(parsed, MessageEdit):
            edited(parsed, BOT_USER_ID)


def test_an_edit_with_no_ts_anywhere_is_ignored() -> None:
    payload = without(without(changed(), "event", "message", "ts"), "event", "previous_message", "ts")
    assert isinstance(parse(payload), Ignored)


@pytest.mark.parametrize("change", [
    {"previous_text": "new words"},  # an unfurl: the text did not change
    {"user": BOT_USER_ID},  # the bot's own message
])
def test_an_edit_that_is_not_a_users_new_text_starts_nothing(change: Payload) -> None:
    payload = make_slack_event("message_changed", text="new words", message_ts="1.1",
                               **{"previous_text": "old words", **change})
    edit = parse(payload)
    assert isinstance(edit, MessageEdit) and edited(edit, BOT_USER_ID) is None


def test_an_edit_of_a_bots_message_starts_nothing() -> None:
    payload = changed()
    payload["event"]["message"]["bot_id"] = "B0OTHER"
    edit = parse(payload)
    assert isinstance(edit, MessageEdit) and edited(edit, BOT_USER_ID) is None


# --- interactions --------------------------------------------------------------------


def test_a_click_in_a_message() -> None:
    clicked = parse(make_block_action("hermes.run.stop", "run-1", message_ts="1.2", thread_ts="1.1"))
    assert clicked == Click(TEAM_ID, USER_ID, CHANNEL_ID, "1.1", "1.2", "0.0.unknown",
                            "hermes.run.stop", "run-1", None)


def test_a_click_in_an_ephemeral_carries_only_its_container() -> None:
    payload = without(without(make_block_action("hermes.run.stop", "run-1"), "message"), "channel")
    payload["container"] = {"type": "message", "message_ts": "1.3", "channel_id": "C0OTHER",
                            "is_ephemeral": True}
    clicked = parse(payload)
    assert isinstance(clicked, Click) and (clicked.channel, clicked.message_ts) == ("C0OTHER", "1.3")


@pytest.mark.parametrize("view_type", ["modal", "home"])
def test_a_click_in_a_modal_or_the_home_tab(view_type: str) -> None:
    payload = without(without(make_block_action("hermes.thinking.next", "1:1"), "message"), "channel")
    payload["container"] = {"type": "view", "view_id": "V0VIEW"}
    payload["view"] = {"id": "V0VIEW", "type": view_type, "team_id": TEAM_ID}
    clicked = parse(payload)
    assert isinstance(clicked, Click)
    assert (clicked.channel, clicked.view_id, clicked.value) == (None, "V0VIEW", "1:1")


def test_a_select_carries_its_option() -> None:
    payload = make_block_action("hermes.session.model", action_type="static_select",
                                selected_option={"value": "3:fast", "text": {"type": "plain_text"}})
    clicked = parse(payload)
    assert isinstance(clicked, Click) and clicked.value == "3:fast"


@pytest.mark.parametrize("actions", [None, [], [None], ["x"], [{}], [{"action_id": 7}], {"0": {}}, "x"])
def test_a_click_without_an_action_id_is_ignored(actions: Any) -> None:
    payload = make_block_action("hermes.run.stop", "run-1")
    payload["actions"] = actions
    assert isinstance(parse(payload), Ignored)


@pytest.mark.parametrize("path", [("user",), ("team",), ("channel",), ("container",), ("message",),
                                  ("trigger_id",), ("actions", "0", "value")])
@pytest.mark.parametrize("value", OTHER_TYPES)
def test_a_click_of_any_shape_is_typed(path: tuple[str, ...], value: Any) -> None:
    payload = make_block_action("hermes.run.stop", "run-1")
    if path[0] == "actions":
        payload["actions"][0]["value"] = value
    else:
        payload[path[0]] = value
    clicked = parse(payload)
    assert isinstance(clicked, Click) and all(
        isinstance(getattr(clicked, f), str | type(None)) for f in Click.__slots__)


def test_a_submitted_modal_is_typed() -> None:
    payload = make_view_submission("hermes.clarify.answer", {"answer": {"text": "  mine  "}},
                                   private_metadata="4")
    submitted = parse(payload)
    assert isinstance(submitted, ViewSubmission)
    assert (submitted.callback_id, submitted.private_metadata, submitted.user) == (
        "hermes.clarify.answer", "4", USER_ID)
    assert submitted.value("answer", "text") == "  mine  " and submitted.value("x", "y") == ""


@pytest.mark.parametrize("state", [None, 7, [], {"values": None}, {"values": {"answer": None}},
                                   {"values": {"answer": {"text": None}}},
                                   {"values": {"answer": {"text": {"value": 7}}}}])
def test_a_submitted_modal_of_any_state_reads_as_empty(state: Any) -> None:
    payload = make_view_submission("hermes.clarify.answer", private_metadata="4")
    payload["view"]["state"] = state
    submitted = parse(payload)
    assert isinstance(submitted, ViewSubmission) and submitted.value("answer", "text") == ""


@pytest.mark.parametrize("view", [None, 7, {}, {"callback_id": None}, {"callback_id": 7}])
def test_a_submission_without_its_callback_id_is_ignored(view: Any) -> None:
    payload = make_view_submission("hermes.clarify.answer")
    payload["view"] = view
    assert isinstance(parse(payload), Ignored)


@pytest.mark.parametrize("payload", [
    {"type": "view_closed", "view": {"callback_id": "hermes.clarify.answer"}, "is_cleared": False},
    {"type": "block_suggestion", "action_id": "hermes.x", "block_id": "b", "value": "ab"},
    {"type": "interactive_message", "callback_id": "legacy", "actions": [{"name": "ok"}]},
    {"type": "shortcut", "callback_id": "x"}, {"type": "message_action", "callback_id": "x"},
    {"type": "url_verification", "challenge": "c"}, {"type": None}, {}, [], "x", None, 7,
])
def test_payloads_the_product_does_not_use_are_ignored(payload: Any) -> None:
    assert isinstance(parse(payload), Ignored)


@pytest.mark.parametrize("event_type", ["reaction_added", "team_join", "member_joined_channel",
                                        None, 7])
def test_other_events_are_ignored(event_type: Any) -> None:
    assert isinstance(parse(make_slack_event({"type": event_type, "user": USER_ID})), Ignored)


def test_a_slash_command_is_typed() -> None:
    command = parse(make_slash_command("/hermes", "status"))
    assert command == SlashCommand(TEAM_ID, CHANNEL_ID, USER_ID, "/hermes", "status")


@pytest.mark.parametrize("field", ["team_id", "channel_id", "user_id", "command"])
def test_a_slash_command_without_where_or_who_is_ignored(field: str) -> None:
    fields: Payload = dict(make_slash_command("/hermes", "status"))
    fields[field] = ""
    assert isinstance(parse(fields), Ignored)
    del fields[field]
    assert field == "command" or isinstance(parse(fields), Ignored)


# --- what slack-bolt can read --------------------------------------------------------


def bolt_builds(body: object) -> bool:
    """Whether slack-bolt builds a request of `body` (Socket Mode hands it the dict)."""
    try:
        AsyncBoltRequest(body=body, mode="socket_mode")  # type: ignore[arg-type]
    except (TypeError, AttributeError, KeyError, IndexError):
        return False
    return True


@pytest.mark.parametrize("body", [
    make_slack_event("app_mention"), changed(), make_block_action("hermes.run.stop", "r"),
    make_view_submission("hermes.clarify.answer"), make_slash_command("/hermes", "x"),
    {"type": "event_callback", "event": {"type": "message", "user": None}},
])
def test_real_shapes_are_readable(body: Payload) -> None:
    assert bolt_can_read(body) and bolt_builds(body)


@pytest.mark.parametrize("body", [
    {"type": "event_callback", "event": "?"}, {"type": "event_callback", "event": None},
    {"type": "event_callback", "event": {"type": "message", "user": 7}},
    {"type": "event_callback", "event": {"type": "message", "channel": 5}},
    {"type": "event_callback", "event": {"type": "message_changed", "message": {"user": 1.5}}},
    {"type": "event_callback", "authorizations": [7]}, {"type": "event_callback", "authorizations": 7},
    {"type": "block_actions", "user": 7}, {"type": "view_submission", "team": True},
    {"type": "view_submission", "response_urls": [None]}, {"enterprise": 3}, [], "x", None,
])
def test_shapes_slack_bolt_cannot_read_are_refused(body: Any) -> None:
    assert not bolt_can_read(body)
    if isinstance(body, dict) and body.get("event") is not None and not isinstance(body["event"], str):
        assert not bolt_builds(body)  # bolt would have raised (the others fail in its middleware)


@pytest.mark.parametrize("payload", [
    make_block_action("open-docs", "https://example.org"),  # a link button, or another app's
    make_view_submission("another.app.modal"),
    make_slash_command("/other", "status"),
])
def test_what_is_not_ours_is_ignored(payload: Payload) -> None:
    assert isinstance(parse(payload), Ignored)


def test_text_is_made_storable() -> None:
    event = make_slack_event("thread_message", text="a\x00b\ud83d", thread_ts="1.1")
    parsed = parse(event)
    assert isinstance(parsed, MessageEvent) and parsed.text == "a\ufffdb\ufffd"


def test_the_messages_tab_opened_is_typed() -> None:
    body = make_slack_event({"type": "app_home_opened", "user": USER_ID, "channel": "D1",
                             "tab": "messages"})
    assert parse(body) == HomeOpened("T0FAKE", "D1", "messages")
    assert parse(make_slack_event({"type": "app_home_opened", "tab": None})) == HomeOpened(
        "T0FAKE", "", "")
