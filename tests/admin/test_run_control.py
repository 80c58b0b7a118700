"""The runs in flight and the queue, stopping runs, state of any run, and regenerate."""

from __future__ import annotations

import httpx

from core.chat import sessions, tree
from core.runtime.pool import RunPool
from core.store.models import ChatMessage, ClarifyPause, MessageStatus, Role
from tests.admin.builders import conversation, running_turn, store_logs, thinking_events
from tests.core.runtime.waiting import finished, until
from tests.fakes.fake_bridge import FakeBridge, Stall, ev


def _stall(fake_bridge: FakeBridge) -> None:
    fake_bridge.default_script = lambda run_id: [
        Stall(run_id, heartbeat=0.2), ev("done", final_text=f"answer of {run_id}"),
    ]


async def _start(api: httpx.AsyncClient, text: str = "job") -> dict[str, object]:
    session = await sessions.create_session()
    response = await api.post(f"/api/chat/sessions/{session.id}/runs", json={"message": text})
    assert response.status_code == 201, response.text
    return response.json()


async def test_the_list_shows_running_runs_and_the_queue_and_stop_empties_it(
    fake_pool_api: httpx.AsyncClient, fake_pool: RunPool, fake_bridge: FakeBridge
) -> None:
    _stall(fake_bridge)
    runs = [await _start(fake_pool_api, f"job {n}") for n in range(4)]  # the cap is two
    assert [(r["status"], r["position"]) for r in runs] == [
        ("RUNNING", None), ("RUNNING", None), ("QUEUED", 1), ("QUEUED", 2)]
    ids = [str(r["runId"]) for r in runs]

    listed = (await fake_pool_api.get("/api/chat/runs")).json()
    assert {r["runId"] for r in listed["running"]} == set(ids[:2])
    assert [(r["runId"], r["position"], r["status"]) for r in listed["queued"]] == [
        (ids[2], 1, "QUEUED"), (ids[3], 2, "QUEUED")]
    queued_state = (await fake_pool_api.get(f"/api/chat/runs/{ids[3]}/state")).json()
    assert (queued_state["status"], queued_state["position"]) == ("QUEUED", 2)

    stopped = await fake_pool_api.post(f"/api/chat/runs/{ids[2]}/stop")  # a queued run
    assert stopped.status_code == 200
    assert (stopped.json()["runId"], stopped.json()["status"]) == (ids[2], "STOPPED")
    await until(fake_pool, ids[3], lambda u: u.position == 1)
    listed = (await fake_pool_api.get("/api/chat/runs")).json()
    assert [(r["runId"], r["position"]) for r in listed["queued"]] == [(ids[3], 1)]

    aborting = await fake_pool_api.post(f"/api/chat/runs/{ids[0]}/stop")  # a running run
    assert aborting.status_code == 200 and aborting.json()["runId"] == ids[0]
    assert (await finished(fake_pool, ids[0])).status == MessageStatus.STOPPED
    await until(fake_pool, ids[3], lambda u: u.status == MessageStatus.RUNNING)
    listed = (await fake_pool_api.get("/api/chat/runs")).json()
    assert ({r["runId"] for r in listed["running"]}, listed["queued"]) == ({ids[1], ids[3]}, [])
    posted = {r.body["run_id"] for r in fake_bridge.requests if r.path == "/run"}
    assert ids[2] not in posted  # the stopped queued run never reached the Bridge

    again = await fake_pool_api.post(f"/api/chat/runs/{ids[0]}/stop")
    assert (again.status_code, again.json()["code"]) == (409, "conflict")
    assert "already ended: STOPPED" in again.json()["message"]
    state = (await fake_pool_api.get(f"/api/chat/runs/{ids[0]}/state")).json()
    assert (state["status"], state["error"]) == ("STOPPED", "Stopped.")
    for run_id in ids:
        fake_bridge.release(run_id)


async def test_stop_of_unknown_runs_is_404_and_of_runs_driven_elsewhere_stops_them(
    db: str, api: httpx.AsyncClient
) -> None:
    missing = await api.post("/api/chat/runs/no-such-run/stop")
    assert (missing.status_code, missing.json()["code"]) == (404, "not_found")
    session = await conversation("elsewhere")
    elsewhere = await running_turn(session.id, "still going?", MessageStatus.RUNNING)
    response = await api.post(f"/api/chat/runs/{elsewhere.run_id}/stop")
    # Not driven here, unknown to the shared Bridge (its replica died before it ran): stopped
    # from here all the same, as Slack's and Discord's Stop buttons do.
    assert (response.status_code, response.json()["status"]) == (200, "STOPPED")
    stored = await ChatMessage.get(id=elsewhere.id)
    assert (stored.status, stored.error) == (MessageStatus.STOPPED, "Stopped.")
    again = await api.post(f"/api/chat/runs/{elsewhere.run_id}/stop")
    assert (again.status_code, again.json()["code"]) == (409, "conflict")


async def test_the_state_of_a_run_not_driven_here_comes_from_the_database(
    db: str, api: httpx.AsyncClient
) -> None:
    session = await conversation("elsewhere")
    answer = await running_turn(session.id, "which day?", MessageStatus.RUNNING)
    await store_logs(answer.id, thinking_events()[:8])  # up to the clarify question
    await ClarifyPause.create(run_id=answer.run_id, message_id=answer.id, clarify_id="q1",
                              question="Which day?", choices=["Mon", "Tue"])
    state = (await api.get(f"/api/chat/runs/{answer.run_id}/state")).json()
    assert state["runId"] == answer.run_id and state["messageId"] == answer.id
    assert (state["sessionId"], state["userMessageId"]) == (session.id, answer.parent_id)
    assert (state["status"], state["position"], state["error"]) == ("RUNNING", None, None)
    assert state["pendingClarify"] == {"clarifyId": "q1", "question": "Which day?",
                                       "choices": ["Mon", "Tue"]}
    thinking = state["thinking"]
    assert thinking["thinking"].startswith("Let me look at the logs.") and thinking["lastSeq"] == 8
    assert thinking["pendingClarify"]["clarifyId"] == "q1"
    await ClarifyPause.filter(clarify_id="q1").update(status="ANSWERED", answer="Mon")
    state = (await api.get(f"/api/chat/runs/{answer.run_id}/state")).json()
    assert state["pendingClarify"] is None
    missing = await api.get("/api/chat/runs/nope/state")
    assert (missing.status_code, missing.json()["code"]) == (404, "not_found")


async def test_regenerate_makes_a_new_version_by_a_new_run(
    fake_pool_api: httpx.AsyncClient, fake_pool: RunPool
) -> None:
    session = await conversation("r", ("q", "first answer"))
    question, old = await tree.active_branch_ids(session.id)
    response = await fake_pool_api.post(f"/api/chat/messages/{old}/regenerate")
    assert response.status_code == 201, response.text
    body = response.json()
    assert set(body) == {"runId", "newMessageId", "status", "position"}
    done = await finished(fake_pool, body["runId"])
    assert (done.status, done.message_id) == (MessageStatus.SUCCESS, body["newMessageId"])
    versions = (await fake_pool_api.get(f"/api/chat/messages/{old}/versions")).json()
    assert [(v["messageId"], v["isActive"]) for v in versions] == [
        (old, False), (body["newMessageId"], True)]
    fresh = await ChatMessage.get(id=body["newMessageId"])
    assert (fresh.parent_id, fresh.content) == (question, f"done {body['runId']}")


async def test_regenerate_refuses_what_it_cannot_do(
    fake_pool_api: httpx.AsyncClient, fake_pool: RunPool, fake_bridge: FakeBridge
) -> None:
    session = await conversation("r", ("q", "a"))
    question, answer = await tree.active_branch_ids(session.id)
    user = await fake_pool_api.post(f"/api/chat/messages/{question}/regenerate")
    assert (user.status_code, user.json()["code"]) == (400, "invalid_input")
    missing = await fake_pool_api.post("/api/chat/messages/4242/regenerate")
    assert (missing.status_code, missing.json()["code"]) == (404, "not_found")
    _stall(fake_bridge)
    run = (await fake_pool_api.post(f"/api/chat/sessions/{session.id}/runs",
                                    json={"message": "more"})).json()
    busy = await fake_pool_api.post(f"/api/chat/messages/{answer}/regenerate")
    assert (busy.status_code, busy.json()["code"]) == (409, "busy")
    assert await ChatMessage.filter(session_id=session.id, role=Role.ASSISTANT).count() == 2
    fake_bridge.release(str(run["runId"]))
