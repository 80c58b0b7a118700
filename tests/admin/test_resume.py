"""`POST /api/chat/runs/{runId}/resume`: answer a clarify question, whoever started the run."""

from __future__ import annotations

import json
import logging

import httpx
import pytest

from bots.slack import ids as slack_ids
from core.chat import sessions
from core.errors import BridgeUnavailable
from core.runtime.pool import RunPool
from core.store.models import ClarifyPause, MessageStatus, PauseStatus
from tests.admin.conftest import AUTH, admin_on
from tests.admin.sse import events, stream
from tests.bots.discord import harness as discord
from tests.bots.slack import harness as slack
from tests.bots.slack.clocks import FastClock
from tests.core.runtime.waiting import finished, until
from tests.fakes.discordfake import FakeDiscord
from tests.fakes.fake_bridge import FakeBridge, WaitAnswer, ev
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply
from tests.fakes.slack import FakeSlack
from tests.fakes.slack_payloads import CHANNEL_ID
from tests.faults.bridge_child import BridgeChild
from tests.support.discord import ask as discord_question
from tests.support.slack import asked as slack_question
from tests.fakes.changes import WAIT

COLOUR = {"question": "Which colour?", "choices": ["red", "blue"]}


async def test_an_answer_over_http_resumes_a_run_a_chat_platform_started(
    pool_api: httpx.AsyncClient, pool: RunPool, llm: ScriptedLLM
) -> None:
    llm.script(tool_reply(ToolCall("clarify", COLOUR)), text_reply("Blue it is."))
    session = await sessions.create_session()
    run = await pool.start(session.id, "paint the shed", author="U1")  # as Slack or Discord do
    asked = await until(pool, run.run_id, lambda u: u.pause is not None)
    url = f"/api/chat/runs/{run.run_id}"

    state = (await pool_api.get(f"{url}/state")).json()
    assert state["status"] == "RUNNING"
    assert state["pendingClarify"] == {
        "clarifyId": asked.pause.clarify_id, "question": "Which colour?", "choices": ["red", "blue"]}
    listed = (await pool_api.get("/api/chat/runs")).json()["running"]
    assert [r["pendingClarify"]["question"] for r in listed] == ["Which colour?"]

    body = {"clarifyId": asked.pause.clarify_id, "answer": "blue", "answeredBy": "ops"}
    answered = await pool_api.post(f"{url}/resume", json=body)
    assert answered.status_code == 200, answered.text
    assert answered.json() == {"accepted": True, "runId": run.run_id,
                               "clarifyId": asked.pause.clarify_id, "answer": "blue",
                               "answeredBy": "ops"}
    late = await pool_api.post(f"{url}/resume", json={**body, "answer": "red", "answeredBy": "U2"})
    assert (late.status_code, late.json()["code"]) == (409, "conflict")
    assert late.json()["message"] == "already answered by ops: blue"

    done = await finished(pool, run.run_id)
    assert done.status == MessageStatus.SUCCESS and done.pause.answered_by == "ops"
    assert json.loads(llm.requests[-1]["messages"][-1]["content"])["user_response"] == "blue"
    state = (await pool_api.get(f"{url}/state")).json()
    assert (state["status"], state["pendingClarify"]) == ("SUCCESS", None)
    async with stream(pool_api, run.run_id) as frames:
        kinds = [f.event for f in await events(frames)]
    assert "clarify_request" in kinds and kinds[-1] == "done"


async def _answer_over_http(api: httpx.AsyncClient, pool: RunPool, session_id: int) -> str:
    """Answer, as an operator, the question of the one run in flight; its clarify id."""
    [run] = pool.active()
    assert run.session_id == session_id and run.pause is not None
    state = (await api.get(f"/api/chat/runs/{run.run_id}/state")).json()
    assert state["pendingClarify"]["question"] == "Which colour?"
    body = {"clarifyId": run.pause.clarify_id, "answer": "blue", "answeredBy": "ops"}
    answered = await api.post(f"/api/chat/runs/{run.run_id}/resume", json=body)
    assert answered.status_code == 200, answered.text
    assert (await finished(pool, run.run_id)).status == MessageStatus.SUCCESS
    return run.pause.clarify_id


async def _bound_session(api: httpx.AsyncClient, platform: str) -> int:
    [row] = (await api.get("/api/chat/sessions", params={"platform": platform})).json()["items"]
    assert row["bindings"][0]["platform"] == platform
    return int(row["id"])


async def test_an_answer_over_http_resumes_a_run_a_slack_thread_started(
    pool_api: httpx.AsyncClient, pool: RunPool, llm: ScriptedLLM, fake_slack: FakeSlack,
    fast_clock: FastClock,
) -> None:
    llm.script(tool_reply(ToolCall("clarify", COLOUR)), text_reply("Blue it is."))
    async with slack.running(fake_slack, pool, fast_clock) as h:
        thread = (await h.event("app_mention", text="paint the shed"))["ts"]
        question = await slack_question(h, thread)
        await _answer_over_http(pool_api, pool, await _bound_session(pool_api, "slack"))
        [done] = await h.answered(CHANNEL_ID, thread)
        # The thread shows who answered; an operator's name is not a Slack mention.
        closed = await slack.until(lambda: (m := fake_slack.message(CHANNEL_ID, question.ts))
                                   and "answered by" in slack.texts(m) and m)
    assert "✅ answered by ops: blue" in slack.texts(closed) and "<@ops>" not in slack.texts(closed)
    assert not slack.has_button(closed, slack_ids.CLARIFY_CUSTOM)
    assert "Blue it is." in slack.texts(done)
    assert json.loads(llm.requests[-1]["messages"][-1]["content"])["user_response"] == "blue"


async def test_an_answer_over_http_resumes_a_run_a_discord_mention_started(
    pool_api: httpx.AsyncClient, pool: RunPool, llm: ScriptedLLM, fake_discord: FakeDiscord,
) -> None:
    llm.script(tool_reply(ToolCall("clarify", COLOUR)), text_reply("Blue it is."))
    async with discord.running_bot(fake_discord, pool):
        thread, question = await discord_question(fake_discord)
        await _answer_over_http(pool_api, pool, await _bound_session(pool_api, "discord"))
        await fake_discord.wait_until(
            lambda: discord.answered(fake_discord, thread, "Blue it is."), WAIT, "the answer")
        await fake_discord.wait_until(
            lambda: "answered by" in discord.text_of(fake_discord.message(question["id"])), WAIT)
    closed = fake_discord.message(question["id"])
    assert "✅ answered by ops: blue" in discord.text_of(closed) and not discord.buttons(closed)
    assert json.loads(llm.requests[-1]["messages"][-1]["content"])["user_response"] == "blue"


def _asks(fake_bridge: FakeBridge) -> None:
    fake_bridge.default_script = lambda run_id: [
        ev("clarify_request", clarify_id=f"c-{run_id}", question="Go on?", choices=["yes", "no"]),
        WaitAnswer(f"c-{run_id}"), ev("done", final_text="went on"),
    ]


async def _asking_run(api: httpx.AsyncClient, pool: RunPool) -> str:
    session = await sessions.create_session()
    started = await api.post(f"/api/chat/sessions/{session.id}/runs", json={"message": "go"})
    run_id: str = started.json()["runId"]
    await until(pool, run_id, lambda u: u.pause is not None)
    return run_id


async def test_a_bridge_failure_is_503_and_the_question_stays_open(
    fake_pool_api: httpx.AsyncClient, fake_pool: RunPool, fake_bridge: FakeBridge,
    caplog: pytest.LogCaptureFixture,
) -> None:
    _asks(fake_bridge)
    run_id = await _asking_run(fake_pool_api, fake_pool)
    url, body = f"/api/chat/runs/{run_id}/resume", {"clarifyId": f"c-{run_id}", "answer": "yes"}
    fake_bridge.fail("answer", 503)
    with caplog.at_level(logging.WARNING, logger="admin.errors"):
        failed = await fake_pool_api.post(url, json=body)
    assert (failed.status_code, failed.json()["code"]) == (503, "bridge_unavailable")
    # plain words for the client: no Bridge status, route or address; those are in the log
    assert failed.json()["message"] == BridgeUnavailable.PUBLIC
    [logged] = [r.getMessage() for r in caplog.records if r.name == "admin.errors"]
    assert "503" in logged and f"/clarify/c-{run_id}/answer" in logged
    assert (await ClarifyPause.get(clarify_id=f"c-{run_id}")).status == PauseStatus.UNANSWERED
    answered = await fake_pool_api.post(url, json=body)
    assert answered.status_code == 200 and answered.json()["answeredBy"] == "admin"
    assert (await finished(fake_pool, run_id)).status == MessageStatus.SUCCESS


async def test_answers_to_the_wrong_run_or_question_are_refused(
    fake_pool_api: httpx.AsyncClient, fake_pool: RunPool, fake_bridge: FakeBridge
) -> None:
    _asks(fake_bridge)
    first, second = [await _asking_run(fake_pool_api, fake_pool) for _ in range(2)]
    url = f"/api/chat/runs/{first}/resume"
    refusals = [
        ("/api/chat/runs/no-such-run/resume", {"clarifyId": f"c-{first}", "answer": "yes"}, 404, None),
        (url, {"clarifyId": f"c-{second}", "answer": "yes"}, 400, "clarifyId"),
        (url, {"clarifyId": "never-asked", "answer": "yes"}, 400, "clarifyId"),
        (url, {"clarifyId": f"c-{first}", "answer": " "}, 400, "answer"),
        (url, {"clarifyId": f"c-{first}"}, 400, "answer"),
        (url, {"clarifyId": f"c-{first}", "answer": "yes", "answeredBy": ""}, 400, "answeredBy"),
    ]
    for path, body, status, field in refusals:
        response = await fake_pool_api.post(path, json=body)
        assert response.status_code == status, (body, response.text)
        assert response.json().get("field") == field
    assert await ClarifyPause.filter(status=PauseStatus.UNANSWERED).count() == 2
    for run_id in (first, second):
        await fake_pool_api.post(f"/api/chat/runs/{run_id}/resume",
                                 json={"clarifyId": f"c-{run_id}", "answer": "no"})
        assert (await finished(fake_pool, run_id)).status == MessageStatus.SUCCESS


async def test_an_answer_over_http_after_the_bridge_restarted_finishes_the_same_turn(
    child_pool: RunPool, bridge_child: BridgeChild, llm: ScriptedLLM
) -> None:
    llm.script(tool_reply(ToolCall("clarify", COLOUR, call_id="call-colour")),
               text_reply("Blue it is."))
    run = await child_pool.start((await sessions.create_session()).id, "paint the shed")
    asked = await until(child_pool, run.run_id, lambda u: u.pause is not None)
    await bridge_child.kill()
    await bridge_child.start()  # a Bridge that never heard of the run or its question
    async with admin_on(child_pool) as url, \
            httpx.AsyncClient(base_url=url, headers=AUTH, timeout=WAIT) as api:
        body = {"clarifyId": asked.pause.clarify_id, "answer": "blue", "answeredBy": "ops"}
        answered = await api.post(f"/api/chat/runs/{run.run_id}/resume", json=body)
        assert answered.status_code == 200, answered.text
        assert answered.json()["accepted"] is True
        done = await finished(child_pool, run.run_id)
    assert (done.status, done.message_id) == (MessageStatus.SUCCESS, asked.message_id)
    assert done.pause.status == PauseStatus.ANSWERED and done.pause.answered_by == "ops"
    told = llm.requests[-1]["messages"][-1]
    assert told["tool_call_id"] == "call-colour"
    assert json.loads(told["content"])["user_response"] == "blue"
