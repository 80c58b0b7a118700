"""The fake Slack, driven through the real slack_sdk AsyncWebClient and slack-bolt AsyncApp."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.app.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from tests.fakes.slack import Budget, FakeSlack, ManualClock, SlackLimits
from tests.fakes.slack_payloads import (
    SignedRequest,
    command_request,
    event_request,
    interaction_request,
    make_block_action,
    make_slack_event,
    make_slash_command,
    make_view_submission,
    sign_request,
)

SECRET = "test-signing-secret"


def section(text: str, block_id: str | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "section", "text": {"type": "mrkdwn", "text": text}}
    return {**block, "block_id": block_id} if block_id else block


def modal(title: str = "Custom answer") -> dict[str, Any]:
    return {"type": "modal", "callback_id": "custom_answer",
            "title": {"type": "plain_text", "text": title}, "blocks": [section("Your answer")]}


async def api_error(call: Any) -> SlackApiError:
    with pytest.raises(SlackApiError) as caught:
        await call
    return caught.value


# --- the message model ----------------------------------------------------------------


async def test_post_update_and_read_a_thread(slack: FakeSlack, client: AsyncWebClient) -> None:
    parent = await client.chat_postMessage(channel="C1", text="question")
    reply = await client.chat_postMessage(channel="C1", thread_ts=parent["ts"], text="working",
                                          blocks=[section("working")])
    await client.chat_update(channel="C1", ts=reply["ts"], text="done", blocks=[section("done")])

    assert (parent["ts"], reply["ts"]) == ("1700000000.000100", "1700000000.000200")
    message = slack.message("C1", reply["ts"])
    assert (message.text, message.blocks) == ("done", [section("done")])
    assert [r.text for r in message.revisions] == ["working"]
    assert [m.ts for m in slack.thread("C1", parent["ts"])] == [parent["ts"], reply["ts"]]
    read = await client.conversations_replies(channel="C1", ts=parent["ts"])
    assert [m["text"] for m in read["messages"]] == ["question", "done"]
    assert read["messages"][0]["reply_count"] == 1
    assert read["messages"][1]["edited"]["user"] == "U0BOT"
    assert [c.method for c in slack.calls] == [
        "chat.postMessage", "chat.postMessage", "chat.update", "conversations.replies"]
    assert all(c.token == "xoxb-test" and c.ok for c in slack.calls)
    assert slack.calls[1].args["blocks"] == [section("working")]


async def test_form_query_and_get_requests(slack: FakeSlack, client: AsyncWebClient) -> None:
    posted = await client.api_call("chat.postMessage", data={
        "channel": "C1", "text": "form", "blocks": json.dumps([section("form")])})
    await client.reactions_add(channel="C1", timestamp=posted["ts"], name="eyes")
    error = await api_error(client.reactions_add(channel="C1", timestamp=posted["ts"], name="eyes"))
    link = await client.chat_getPermalink(channel="C1", message_ts=posted["ts"])
    await client.assistant_threads_setStatus(channel_id="C1", thread_ts=posted["ts"],
                                             status="is thinking…")
    await client.chat_postEphemeral(channel="C1", user="U1", text="only you")
    info = await client.conversations_info(channel="D1")
    user = await client.users_info(user="U1")
    await client.chat_delete(channel="C1", ts=posted["ts"])

    assert slack.message("C1", posted["ts"]).blocks == [section("form")]
    assert slack.message("C1", posted["ts"]).deleted and slack.history("C1") == []
    assert slack.reactions("C1", posted["ts"]) == ["eyes"]
    assert error.response["error"] == "already_reacted"
    assert link["permalink"].endswith("/archives/C1/p1700000000000100")
    assert slack.workspace.thread_status[("C1", posted["ts"])] == "is thinking…"
    assert slack.workspace.ephemerals[0]["text"] == "only you"
    assert info["channel"]["is_im"] and user["user"]["id"] == "U1"
    assert [c.method for c in slack.calls if c.args.get("name") == "eyes"] == ["reactions.add"] * 2


async def test_auth_tokens_and_unknown_methods(slack: FakeSlack, client: AsyncWebClient) -> None:
    auth = await client.auth_test()
    assert (auth["user_id"], auth["bot_id"], auth["team_id"]) == ("U0BOT", "B0BOT", "T0FAKE")

    app_token = AsyncWebClient(base_url=slack.api_url, token="xapp-test")
    nobody = AsyncWebClient(base_url=slack.api_url)
    errors = [
        await api_error(app_token.chat_postMessage(channel="C1", text="x")),
        await api_error(nobody.auth_test()),
        await api_error(client.apps_connections_open(app_token="xoxb-test")),
        await api_error(client.api_call("chat.doSomethingNew")),
        await api_error(client.chat_postMessage(channel="#general", text="x")),
        await api_error(client.chat_update(channel="C1", ts="1.2", text="x")),
    ]
    assert [e.response["error"] for e in errors] == [
        "not_allowed_token_type", "not_authed", "not_allowed_token_type", "unknown_method",
        "channel_not_found", "message_not_found"]
    opened = await client.apps_connections_open(app_token="xapp-test")
    assert opened["url"].startswith(f"ws://127.0.0.1:{slack.port}/link/?ticket=")


async def test_only_the_configured_token_is_valid() -> None:
    async with FakeSlack(bot_token="xoxb-right") as slack:
        wrong = AsyncWebClient(base_url=slack.api_url, token="xoxb-wrong")
        assert (await api_error(wrong.auth_test())).response["error"] == "invalid_auth"
        right = AsyncWebClient(base_url=slack.api_url, token="xoxb-right")
        assert (await right.auth_test())["ok"]


# --- limits ---------------------------------------------------------------------------


async def test_chat_update_once_a_second_per_message(
    slack: FakeSlack, client: AsyncWebClient, clock: ManualClock
) -> None:
    first = await client.chat_postMessage(channel="C1", text="a")
    other = await client.chat_postMessage(channel="C1", text="b")
    await client.chat_update(channel="C1", ts=first["ts"], text="a1")
    clock.advance(0.5)
    error = await api_error(client.chat_update(channel="C1", ts=first["ts"], text="a2"))
    await client.chat_update(channel="C1", ts=other["ts"], text="b1")  # its own budget

    assert error.response.status_code == 429
    assert error.response.headers["Retry-After"] == "1"
    assert error.response["error"] == "ratelimited"
    assert slack.message("C1", first["ts"]).text == "a1" and slack.ratelimited == 1
    clock.advance(0.5)
    await client.chat_update(channel="C1", ts=first["ts"], text="a3")
    assert slack.message("C1", first["ts"]).text == "a3" and slack.ratelimited == 1


async def test_tier_3_budget_per_method_on_a_sliding_minute(
    slack: FakeSlack, client: AsyncWebClient, clock: ManualClock
) -> None:
    """50 calls in any minute, bunched or not: the 51st waits until the oldest is a minute old."""
    posted = await client.chat_postMessage(channel="C1", text="x")
    for n in range(40):  # a burst: Slack welcomes those
        await client.reactions_add(channel="C1", timestamp=posted["ts"], name=f"r{n}")
    clock.advance(30)
    for n in range(40, 50):
        await client.reactions_add(channel="C1", timestamp=posted["ts"], name=f"r{n}")
    error = await api_error(client.reactions_add(channel="C1", timestamp=posted["ts"], name="r50"))
    await client.chat_update(channel="C1", ts=posted["ts"], text="y")  # another method's budget

    assert error.response.status_code == 429
    assert error.response.headers["Retry-After"] == "30"  # when the first 40 leave the minute
    clock.advance(29.5)
    error = await api_error(client.reactions_add(channel="C1", timestamp=posted["ts"], name="r50"))
    clock.advance(0.5)
    for n in range(50, 90):  # the first 40 left the window: 40 more fit, not 41
        await client.reactions_add(channel="C1", timestamp=posted["ts"], name=f"r{n}")
    error = await api_error(client.reactions_add(channel="C1", timestamp=posted["ts"], name="r90"))
    assert error.response.headers["Retry-After"] == "30"
    assert len(slack.reactions("C1", posted["ts"])) == 90 and slack.ratelimited == 3


async def test_post_message_bursts_per_channel(
    slack: FakeSlack, client: AsyncWebClient, clock: ManualClock
) -> None:
    for n in range(5):
        await client.chat_postMessage(channel="C1", text=f"part {n}")
    error = await api_error(client.chat_postMessage(channel="C1", text="part 5"))
    await client.chat_postMessage(channel="C2", text="elsewhere")
    clock.advance(1)
    await client.chat_postMessage(channel="C1", text="part 5")

    assert error.response.status_code == 429 and error.response.headers["Retry-After"] == "1"
    assert [m.text for m in slack.history("C1")][-1] == "part 5"


async def test_limits_are_configurable(clock: ManualClock) -> None:
    limits = SlackLimits(max_text=10, methods={"chat.delete": Budget(per_minute=6, burst=1)})
    async with FakeSlack(limits=limits, clock=clock) as slack:
        client = AsyncWebClient(base_url=slack.api_url, token="xoxb-test")
        a = await client.chat_postMessage(channel="C1", text="0123456789")
        b = await client.chat_postMessage(channel="C1", text="b")
        await client.chat_delete(channel="C1", ts=a["ts"])
        error = await api_error(client.chat_delete(channel="C1", ts=b["ts"]))
        assert error.response.headers["Retry-After"] == "10"
        too_long = await api_error(client.chat_postMessage(channel="C1", text="01234567890"))
        assert too_long.response["error"] == "msg_too_long"
    async with FakeSlack(limits=SlackLimits.unlimited(), clock=clock) as slack:
        client = AsyncWebClient(base_url=slack.api_url, token="xoxb-test")
        posted = await client.chat_postMessage(channel="C1", text="x")
        for n in range(20):
            await client.chat_update(channel="C1", ts=posted["ts"], text=f"x{n}")
        assert slack.ratelimited == 0


async def test_msg_too_long(slack: FakeSlack, client: AsyncWebClient, clock: ManualClock) -> None:
    posted = await client.chat_postMessage(channel="C1", text="x" * 4000)
    errors = [
        await api_error(client.chat_postMessage(channel="C1", text="x" * 4001)),
        await api_error(client.chat_update(channel="C1", ts=posted["ts"], text="x" * 4001)),
    ]
    assert [e.response["error"] for e in errors] == ["msg_too_long", "msg_too_long"]
    assert slack.message("C1", posted["ts"]).text == "x" * 4000


async def test_invalid_blocks(slack: FakeSlack, client: AsyncWebClient, clock: ManualClock) -> None:
    await client.chat_postMessage(channel="C1", text="ok", blocks=[section("x" * 3000)] * 50)
    clock.advance(1)
    too_many = await api_error(client.chat_postMessage(
        channel="C1", text="fallback", blocks=[section("x")] * 51))
    too_long = await api_error(client.chat_postMessage(
        channel="C1", text="fallback", blocks=[section("ok"), section("x" * 3001)]))
    duplicate = await api_error(client.chat_postMessage(
        channel="C1", text="fallback", blocks=[section("a", "b1"), section("b", "b1")]))

    assert {e.response["error"] for e in (too_many, too_long, duplicate)} == {"invalid_blocks"}
    assert too_long.response["errors"] == [
        "must be less than 3001 characters [json-pointer:/blocks/1/text/text]"]
    assert len(slack.history("C1")) == 1


async def test_trigger_id_works_once_within_3_seconds(
    slack: FakeSlack, client: AsyncWebClient, clock: ManualClock
) -> None:
    trigger = slack.new_trigger_id()
    clock.advance(2.9)
    opened = await client.views_open(trigger_id=trigger, view=modal())
    reused = await api_error(client.views_open(trigger_id=trigger, view=modal()))
    late = slack.new_trigger_id()
    clock.advance(3.1)
    expired = await api_error(client.views_open(trigger_id=late, view=modal()))
    unknown = await api_error(client.views_open(trigger_id="1.2.3", view=modal()))
    bad_view = await api_error(client.views_open(trigger_id=slack.new_trigger_id(),
                                                 view=modal(title="x" * 25)))

    assert [e.response["error"] for e in (reused, expired, unknown, bad_view)] == [
        "exchanged_trigger_id", "expired_trigger_id", "invalid_trigger_id", "invalid_arguments"]
    view = opened["view"]
    updated = await client.views_update(view_id=view["id"], hash=view["hash"],
                                        view=modal("Again"))
    stale = await api_error(client.views_update(view_id=view["id"], hash=view["hash"],
                                                view=modal()))
    assert updated["view"]["title"]["text"] == "Again"
    assert stale.response["error"] == "hash_conflict"
    assert slack.state.views[view["id"]]["title"]["text"] == "Again"


async def test_files_upload_v2_end_to_end(slack: FakeSlack, client: AsyncWebClient) -> None:
    parent = await client.chat_postMessage(channel="C1", text="question")
    uploaded = await client.files_upload_v2(
        channel="C1", thread_ts=parent["ts"], content="# the long answer\n", filename="answer.md",
        title="Answer", initial_comment="The full answer is attached.")

    file_id = uploaded["file"]["id"]
    assert slack.file_content(file_id) == b"# the long answer\n"
    assert uploaded["file"]["title"] == "Answer"
    shared = slack.thread("C1", parent["ts"])[-1]
    assert shared.text == "The full answer is attached." and shared.files[0]["id"] == file_id
    assert [c.method for c in slack.calls[1:]] == [
        "files.getUploadURLExternal", "upload", "files.completeUploadExternal"]
    assert slack.calls[1].args == {"filename": "answer.md", "length": "18"}


# --- injected faults ------------------------------------------------------------------


async def test_injected_faults(slack: FakeSlack, client: AsyncWebClient) -> None:
    slack.fail("chat.postMessage", status=503)
    slack.ratelimit("chat.postMessage", retry_after=7)
    failed = await api_error(client.chat_postMessage(channel="C1", text="x"))
    limited = await api_error(client.chat_postMessage(channel="C1", text="x"))
    assert failed.response.status_code == 503
    assert limited.response.status_code == 429 and limited.response.headers["Retry-After"] == "7"

    slack.hang("chat.update")
    posted = await client.chat_postMessage(channel="C1", text="x")
    held = asyncio.create_task(client.chat_update(channel="C1", ts=posted["ts"], text="y"))
    await slack.wait_for_calls("chat.update", answered=False)
    assert slack.faults.hanging("chat.update") == 1 and not held.done()
    slack.release("chat.update")
    assert (await held)["ok"] and slack.message("C1", posted["ts"]).text == "y"
    assert [c.status for c in slack.calls] == [503, 429, 200, 200] and slack.ratelimited == 1


# --- payload builders, through bolt's request verification and routing ------------------


def bolt_app(slack: FakeSlack) -> AsyncApp:
    client = AsyncWebClient(base_url=slack.api_url, token="xoxb-test")
    return AsyncApp(client=client, signing_secret=SECRET)


async def dispatch(app: AsyncApp, request: SignedRequest) -> int:
    bolt_request = AsyncBoltRequest(body=request.body.decode(), headers=request.headers)
    return (await app.async_dispatch(bolt_request)).status


async def test_signed_payloads_are_accepted_and_routed_by_bolt(slack: FakeSlack) -> None:
    app = bolt_app(slack)
    seen: asyncio.Queue[str] = asyncio.Queue()

    @app.event("app_mention")
    async def on_mention(event: dict[str, Any]) -> None:
        await seen.put(f"mention:{event['text']}")

    @app.event("message")
    async def on_message(event: dict[str, Any]) -> None:
        await seen.put(f"message:{event.get('subtype') or event['channel_type']}")

    @app.action("custom_answer")
    async def on_click(ack: Any, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        opened = await client.views_open(trigger_id=body["trigger_id"], view=modal())
        await seen.put(f"modal:{opened['view']['id']}")

    @app.view("custom_answer")
    async def on_submit(ack: Any, view: dict[str, Any]) -> None:
        await ack()
        await seen.put(f"submit:{view['state']['values']['answer']['text']['value']}")

    @app.command("/hermes")
    async def on_command(ack: Any, command: dict[str, Any]) -> None:
        await ack()
        await seen.put(f"command:{command['text']}")

    requests = [
        event_request(make_slack_event("app_mention", text="hi"), SECRET),
        event_request(make_slack_event("thread_message", thread_ts="1.1"), SECRET),
        event_request(make_slack_event("dm", text="psst"), SECRET),
        event_request(make_slack_event("message_changed", text="new", message_ts="1.1"), SECRET),
        interaction_request(make_block_action(
            "custom_answer", "c1", message_ts="1700000000.000100",
            trigger_id=slack.new_trigger_id()), SECRET),
        interaction_request(make_view_submission(
            "custom_answer", {"answer": {"text": "forty-two"}}), SECRET),
        command_request(make_slash_command("/hermes", "status"), SECRET),
    ]
    assert [await dispatch(app, r) for r in requests] == [200] * len(requests)
    got = {await asyncio.wait_for(seen.get(), 5) for _ in requests}
    [view_id] = slack.state.views
    assert got == {"mention:<@U0BOT> hi", "message:channel", "message:im",
                   "message:message_changed", f"modal:{view_id}", "submit:forty-two",
                   "command:status"}

    forged = SignedRequest(requests[0].body, sign_request(requests[0].body, "wrong-secret"))
    assert await dispatch(app, forged) == 401


# --- Socket Mode ----------------------------------------------------------------------


async def test_socket_mode_with_bolt(slack: FakeSlack) -> None:
    app = bolt_app(slack)

    @app.event("app_mention")
    async def on_mention(event: dict[str, Any], say: Any) -> None:
        await say(text="on it", thread_ts=event["ts"])

    handler = AsyncSocketModeHandler(app, app_token="xapp-test")
    await handler.connect_async()
    try:
        await slack.socket.wait_connected()
        event = make_slack_event("app_mention", text="hi", channel="C1")
        envelope_id = await slack.socket.push_event(event)
        assert await slack.socket.wait_ack(envelope_id) == {"envelope_id": envelope_id}
        await slack.wait_for_calls("chat.postMessage")
        reply = slack.thread("C1", event["event"]["ts"])[0]
        assert (reply.text, reply.user) == ("on it", "U0BOT")

        await slack.socket.disconnect()  # Slack's periodic refresh: the client reconnects
        await slack.socket.wait_connected(count=2)
        envelope_id = await slack.socket.push_event(make_slack_event("app_mention", channel="C1"))
        assert await slack.socket.wait_ack(envelope_id) == {"envelope_id": envelope_id}
    finally:
        await handler.close_async()

    opens = slack.calls_to("apps.connections.open")
    assert len(opens) == 2 and {c.token for c in opens} == {"xapp-test"}
    assert slack.calls[0].method == "apps.connections.open"


async def test_an_outage_holds_for_its_window_of_the_clock(
    slack: FakeSlack, client: AsyncWebClient, clock: ManualClock
) -> None:
    posted = await client.chat_postMessage(channel="C1", text="x")
    down = slack.outage(60.0, status=503)
    failed = await api_error(client.chat_update(channel="C1", ts=posted["ts"], text="y"))
    assert failed.response.status_code == 503 and slack.message("C1", posted["ts"]).text == "x"
    clock.advance(60.0)
    assert (await client.chat_update(channel="C1", ts=posted["ts"], text="y"))["ok"]

    hung = slack.outage(30.0, method="chat.update", hang=True)
    held = asyncio.create_task(client.chat_update(channel="C1", ts=posted["ts"], text="z"))
    await slack.wait_for_calls("chat.update", count=3, answered=False)
    assert not held.done()
    clock.advance(30.0)  # the outage ends: the held call answers 503, not applied
    assert (await api_error(held)).response.status_code == 503
    assert (down.met, hung.met) == (1, 1) and slack.message("C1", posted["ts"]).text == "y"
