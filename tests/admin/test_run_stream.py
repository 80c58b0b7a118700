"""`GET /api/chat/runs/{runId}/stream`: the stored log, then live, each event once, resumable."""

from __future__ import annotations

import httpx
import pytest

from core.chat import sessions
from core.runtime.pool import RunPool
from core.store.models import ChatMessage, ChatMessageLog, Role
from tests.admin.builders import conversation, store_logs, thinking_events
from tests.admin.sse import events, stream
from tests.core.runtime.waiting import finished, until
from tests.fakes.fake_bridge import FakeBridge, Item, Stall, ev
from tests.fakes.llm_server import ScriptedLLM, text_reply

DONE = ev("done", final_text="all done")


def talk(prefix: str, count: int) -> list[Item]:
    return [ev("text", text=f"{prefix}{i} ") for i in range(count)]


async def _start(api: httpx.AsyncClient, text: str = "go") -> str:
    session = await sessions.create_session()
    response = await api.post(f"/api/chat/sessions/{session.id}/runs", json={"message": text})
    assert response.status_code == 201, response.text
    return response.json()["runId"]


def _stalled_after_five(fake_bridge: FakeBridge) -> None:
    fake_bridge.default_script = lambda run_id: [
        *talk("a", 5), Stall(run_id, heartbeat=0.2), *talk("b", 5), DONE,
    ]


async def test_the_stream_replays_follows_live_keeps_alive_and_ends_after_the_last_event(
    fake_pool_api: httpx.AsyncClient, fake_pool: RunPool, fake_bridge: FakeBridge
) -> None:
    _stalled_after_five(fake_bridge)
    run_id = await _start(fake_pool_api)
    await until(fake_pool, run_id, lambda u: u.state.last_seq == 5)
    async with stream(fake_pool_api, run_id) as frames:
        replayed = await events(frames, lambda f: f.id == 5)
        idle = await anext(frames)  # nothing happens while the Bridge stalls: a keep-alive
        fake_bridge.release(run_id)
        live = await events(frames)
    assert idle.comment == "keep-alive" and idle.id is None
    assert [f.id for f in replayed + live] == list(range(1, 12))
    assert {f.event for f in replayed + live} == {"text", "done"}
    assert replayed[0].data == {"text": "a0 "}  # the Bridge's data shape, nothing added
    assert (live[-1].event, live[-1].data) == ("done", {"final_text": "all done", "model": None})


@pytest.mark.parametrize("how", ["header", "query", "both"])
async def test_a_dropped_client_resumes_with_every_event_exactly_once(
    fake_pool_api: httpx.AsyncClient, fake_pool: RunPool, fake_bridge: FakeBridge, how: str
) -> None:
    _stalled_after_five(fake_bridge)
    run_id = await _start(fake_pool_api)
    await until(fake_pool, run_id, lambda u: u.state.last_seq == 5)
    async with stream(fake_pool_api, run_id) as frames:
        first = await events(frames, lambda f: f.id == 3)
    # The connection is gone mid-stream; the client says where it got to.
    resume = {
        "header": {"last_event_id": 3}, "query": {"query": 3},
        "both": {"last_event_id": 3, "query": 1},  # the header (EventSource's own) wins
    }[how]
    async with stream(fake_pool_api, run_id, **resume) as frames:
        second = await events(frames, lambda f: f.id == 5)
        fake_bridge.release(run_id)
        second += await events(frames)
    ids = [f.id for f in first + second]
    assert ids == list(range(1, 12))
    await finished(fake_pool, run_id)
    async with stream(fake_pool_api, run_id, query=9) as frames:  # a late reconnect
        assert [f.id for f in await events(frames)] == [10, 11]


async def test_a_run_this_process_does_not_drive_is_streamed_from_its_stored_log(
    db: str, api: httpx.AsyncClient
) -> None:
    session = await conversation("logged", ("what broke?", "three errors"))
    answer = await ChatMessage.get(session_id=session.id, role=Role.ASSISTANT)
    await store_logs(answer.id, thinking_events())
    async with stream(api, answer.run_id) as frames:
        every = await events(frames)
    assert [f.id for f in every] == list(range(1, 11))
    clarify = next(f for f in every if f.event == "clarify_request")
    assert clarify.data == {"clarify_id": "q1", "question": "Which day?", "choices": ["Mon", "Tue"]}
    todos = next(f for f in every if f.event == "todo_update")
    assert todos.data["todos"][0] == {"id": "1", "content": "Read the logs", "status": "completed"}
    async with stream(api, answer.run_id, last_event_id=7) as frames:
        assert [f.id for f in await events(frames)] == [8, 9, 10]
    async with stream(api, answer.run_id, last_event_id=10) as frames:
        assert await events(frames) == []


async def test_a_stored_row_no_event_maps_to_ends_the_stream_cleanly(
    db: str, api: httpx.AsyncClient
) -> None:
    session = await conversation("logged", ("q", "a"))
    answer = await ChatMessage.get(session_id=session.id, role=Role.ASSISTANT)
    await store_logs(answer.id, thinking_events()[:2])
    await ChatMessageLog.create(message_id=answer.id, seq=3, kind="mystery", content="?")
    async with stream(api, answer.run_id) as frames:
        assert [f.id for f in await events(frames)] == [1, 2]


async def test_a_real_run_streams_what_the_bridge_sent(
    pool_api: httpx.AsyncClient, pool: RunPool, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("Hello from the agent."))
    run_id = await _start(pool_api, "say hello")
    async with stream(pool_api, run_id) as frames:
        every = await events(frames)
    done = await finished(pool, run_id)
    assert [f.id for f in every] == list(range(1, done.state.last_seq + 1))
    assert (every[-1].event, every[-1].data) == ("done", {"final_text": "Hello from the agent.", "model": llm.model})


async def test_unknown_runs_are_404_before_any_stream(db: str, api: httpx.AsyncClient) -> None:
    response = await api.get("/api/chat/runs/no-such-run/stream")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/json")
    assert response.json() == {"code": "not_found", "message": "no run no-such-run"}


@pytest.mark.parametrize(
    ("headers", "query", "field"),
    [
        ({"Last-Event-ID": "abc"}, "", "Last-Event-ID"),
        ({"Last-Event-ID": "-1"}, "", "Last-Event-ID"),
        ({}, "?lastEventId=-1", "lastEventId"),
        ({}, f"?lastEventId={2**31}", "lastEventId"),
        ({"Last-Event-ID": str(2**53)}, "", "Last-Event-ID"),
        ({}, "?lastEventId=1.5", "lastEventId"),
        ({}, "?lastEventId=1&lastEventId=2", "lastEventId"),
    ],
)
async def test_bad_resume_points_are_400_naming_them(
    db: str, api: httpx.AsyncClient, headers: dict[str, str], query: str, field: str
) -> None:
    session = await conversation("logged", ("q", "a"))
    answer = await ChatMessage.get(session_id=session.id, role=Role.ASSISTANT)
    response = await api.get(f"/api/chat/runs/{answer.run_id}/stream{query}", headers=headers)
    assert response.status_code == 400, response.text
    assert response.json()["field"] == field
