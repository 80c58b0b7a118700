"""BridgeClient against the fault-injecting fake Bridge, over real HTTP and SSE."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import pytest

from core.agent.bridge.client import BridgeClient
from core.agent.bridge.port import Bridge
from core.agent.bridge.stream import StreamPolicy
from core.agent.bridge.types import ClarifyInfo, HistoryMessage, ModelRef, RunRequest
from core.errors import BridgeUnavailable, Conflict, InvalidInput, NotFound
from core.agent.events import ClarifyRequest, Done, Event, RunError, TextDelta
from tests.fakes.fake_bridge import (
    Comments, Drop, FakeBridge, Item, Raw, Repeat, Stall, WaitAnswer, ev,
)

POLICY = StreamPolicy(read_timeout=0.3, connect_timeout=1.0, backoff_base=0.01, max_reconnects=4)


class Sleeps:
    """The injected sleep: records each backoff delay, runs an optional hook, never waits."""

    def __init__(self) -> None:
        self.delays: list[float] = []
        self.hook: Callable[[int], Awaitable[None]] | None = None

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        if self.hook is not None:
            await self.hook(len(self.delays))
        await asyncio.sleep(0)


@pytest.fixture
async def fake() -> AsyncIterator[FakeBridge]:
    async with FakeBridge(heartbeat=0.05) as bridge:
        yield bridge


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
async def client(fake: FakeBridge, sleeps: Sleeps) -> AsyncIterator[BridgeClient]:
    async with BridgeClient(fake.url, policy=POLICY, sleep=sleeps) as bridge:
        yield bridge


def request(run_id: str = "run-1", **extra: object) -> RunRequest:
    return RunRequest(run_id=run_id, session_id="chat-1", user_message="hello", **extra)  # type: ignore[arg-type]


def texts(n: int, start: int = 1) -> list[Item]:
    return [ev("text", text=f"t{i}") for i in range(start, start + n)]


async def collect(stream: AsyncIterator[Event], limit: float = 5.0) -> list[Event]:
    async with asyncio.timeout(limit):
        return [event async for event in stream]


def seqs(events: list[Event]) -> list[int]:
    return [e.seq for e in events]


async def eventually(check: Callable[[], bool], limit: float = 3.0) -> None:
    async with asyncio.timeout(limit):
        while not check():
            await asyncio.sleep(0.01)


# --- streams ----------------------------------------------------------------------------

async def test_full_stream_yields_every_event_once_and_stops_at_done(
    fake: FakeBridge, client: BridgeClient
) -> None:
    fake.script("run-1", [*texts(3), ev("status", category="c", message="m"), ev("done", final_text="ok")])
    events = await collect(client.stream(request()))
    assert seqs(events) == [1, 2, 3, 4, 5]
    assert [e.text for e in events[:3] if isinstance(e, TextDelta)] == ["t1", "t2", "t3"]
    assert events[-1] == Done(seq=5, at=events[-1].at, final_text="ok")
    [post] = fake.requests_to("POST", "/run")
    assert post.body == {
        "run_id": "run-1", "session_id": "chat-1", "user_message": "hello",
        "system_prompt": None, "model": None, "max_iterations": None,
    }
    assert post.headers["Accept"] == "text/event-stream"


async def test_request_body_carries_model_and_history_when_given(
    fake: FakeBridge, client: BridgeClient
) -> None:
    req = request(model=ModelRef(name="m", api_key_env="KEY"), max_iterations=3,
                  history=(HistoryMessage("user", "hi"),), system_prompt="be brief")
    await collect(client.stream(req))
    body = fake.requests_to("POST", "/run")[0].body
    assert body["model"] == {"name": "m", "base_url": None, "api_key_env": "KEY"}
    assert body["history"] == [{"role": "user", "content": "hi"}]
    assert (body["max_iterations"], body["system_prompt"]) == (3, "be brief")
    await collect(client.stream(request("run-2", history=())))
    assert fake.requests_to("POST", "/run")[1].body["history"] == []


async def test_stream_dropped_three_times_yields_each_event_once_in_order(
    fake: FakeBridge, client: BridgeClient, sleeps: Sleeps
) -> None:
    fake.script("run-1", [*texts(2), Drop(), *texts(3, 3), Drop(abrupt=True), ev("text", text="t6"),
                          Drop(), *texts(2, 7), ev("done", final_text="ok")])
    events = await collect(client.stream(request()))
    assert seqs(events) == list(range(1, 10))
    follows = fake.requests_to("GET", "/runs/run-1/events")
    assert [r.headers.get("Last-Event-ID") for r in follows] == ["2", "5", "6"]
    assert sleeps.delays == [0.01, 0.01, 0.01]


async def test_reconnect_resumes_from_what_the_caller_persisted_without_duplicates(
    fake: FakeBridge, client: BridgeClient
) -> None:
    fake.script("run-1", [*texts(4), Drop(), *texts(2, 5), ev("done", final_text="ok")])
    persisted = 0
    events: list[Event] = []
    async for event in client.stream(request(), last_seq=lambda: persisted):
        events.append(event)
        persisted = event.seq - 2 if event.seq > 2 else 0  # the caller lags behind
    assert seqs(events) == [1, 2, 3, 4, 5, 6, 7]
    assert fake.requests_to("GET", "/runs/run-1/events")[0].headers["Last-Event-ID"] == "2"


async def test_repeated_events_are_dropped(fake: FakeBridge, client: BridgeClient) -> None:
    fake.script("run-1", [*texts(3), Repeat(2), *texts(1, 4), Repeat(4), ev("done", final_text="ok")])
    assert seqs(await collect(client.stream(request()))) == [1, 2, 3, 4, 5]


async def test_malformed_events_are_skipped(
    fake: FakeBridge, client: BridgeClient, caplog: pytest.LogCaptureFixture
) -> None:
    fake.script("run-1", [
        Raw("event: text\ndata: {\"text\": \"no id\"}\n\n"),
        *texts(1),
        Raw("id: 50\nevent: text\ndata: {broken\n\n"),
        Raw("id: 51\nevent: telepathy\ndata: {}\n\n"),
        Raw("id: 52\nevent: step\ndata: [1]\n\n"),
        Raw("data: {\"text\": \"no name\"}\n\n"),
        *texts(1, 2), ev("done", final_text="ok"),
    ])
    with caplog.at_level(logging.WARNING, logger="core.agent.events"):
        events = await collect(client.stream(request()))
    assert seqs(events) == [1, 2, 3]
    assert caplog.text.count("run-1") >= 4


async def test_heartbeats_keep_the_connection_and_make_no_events(
    fake: FakeBridge, client: BridgeClient
) -> None:
    fake.script("run-1", [*texts(1), Comments(5), Stall("s", heartbeat=0.05), *texts(1, 2),
                          ev("done", final_text="ok")])
    stream = client.stream(request())
    assert seqs([await anext(stream)]) == [1]
    rest = asyncio.create_task(collect(stream))
    await eventually(lambda: fake.comments_sent >= 5 + 8)  # > read_timeout worth of heartbeats
    fake.release("s")
    assert seqs(await rest) == [2, 3]
    assert fake.requests_to("GET", "/runs/") == []


async def test_a_silent_stall_reconnects_after_the_read_timeout(
    fake: FakeBridge, client: BridgeClient, sleeps: Sleeps
) -> None:
    fake.script("run-1", [*texts(2), Stall("silent"), *texts(2, 3), ev("done", final_text="ok")])
    assert seqs(await collect(client.stream(request()))) == [1, 2, 3, 4, 5]
    follows = fake.requests_to("GET", "/runs/run-1/events")
    assert [r.headers["Last-Event-ID"] for r in follows] == ["2"]
    assert len(sleeps.delays) == 1


@pytest.mark.parametrize("status", [500, 503])
async def test_5xx_at_start_is_bridge_unavailable(
    fake: FakeBridge, client: BridgeClient, status: int
) -> None:
    fake.fail("run", status)
    with pytest.raises(BridgeUnavailable) as caught:
        await collect(client.stream(request()))
    assert f"answered {status}" in caught.value.message
    assert "run-1" in caught.value.message and "POST /run" in caught.value.message


async def test_a_start_that_times_out_is_aborted_on_the_bridge_before_it_fails(
    fake: FakeBridge, client: BridgeClient
) -> None:
    """The Bridge may have started the run although its answer never came: no agent may run
    that nobody follows."""
    held = fake.hold("run")  # POST /run gets no answer before the read timeout
    try:
        with pytest.raises(BridgeUnavailable) as caught:
            await collect(client.stream(request("run-slow")))
    finally:
        held.set()
    assert "could not start run run-slow" in caught.value.message
    assert [r.path for r in fake.requests_to("POST", "/runs/")] == ["/runs/run-slow/abort"]


@pytest.mark.parametrize("status", [500, 503])
async def test_a_start_answered_5xx_is_aborted_too(fake: FakeBridge, client: BridgeClient,
                                                  status: int) -> None:
    fake.fail("run", status)
    with pytest.raises(BridgeUnavailable):
        await collect(client.stream(request("run-5xx")))
    assert [r.path for r in fake.requests_to("POST", "/runs/")] == ["/runs/run-5xx/abort"]


async def test_bridge_down_at_start_is_bridge_unavailable(fake: FakeBridge, client: BridgeClient) -> None:
    await fake.stop()
    with pytest.raises(BridgeUnavailable) as caught:
        await collect(client.stream(request()))
    assert fake.url in caught.value.message and "did not answer" in caught.value.message


async def test_bad_request_at_start_is_invalid_input(fake: FakeBridge, client: BridgeClient) -> None:
    with pytest.raises(InvalidInput, match="user_message"):
        await collect(client.stream(RunRequest(run_id="r", session_id="s", user_message="")))


async def test_run_exists_falls_back_to_following(fake: FakeBridge, client: BridgeClient) -> None:
    fake.add_run("run-1", [*texts(3), ev("done", final_text="ok")])
    assert seqs(await collect(client.stream(request(), last_seq=lambda: 2))) == [3, 4]
    [follow] = fake.requests_to("GET", "/runs/run-1/events")
    assert follow.headers["Last-Event-ID"] == "2"


async def test_follow_from_start_and_unknown_run(fake: FakeBridge, client: BridgeClient) -> None:
    fake.add_run("known", [*texts(2), ev("error", message="boom", code="llm_error")])
    events = await collect(client.follow("known"))
    assert seqs(events) == [1, 2, 3] and isinstance(events[-1], RunError)
    assert "Last-Event-ID" not in fake.requests_to("GET", "/runs/known")[0].headers
    with pytest.raises(NotFound, match="no such run"):
        await collect(client.follow("nobody", last_seq=lambda: 4))


async def test_following_a_finished_run_the_caller_fully_has_just_ends(
    fake: FakeBridge, client: BridgeClient, sleeps: Sleeps
) -> None:
    fake.add_run("old", [*texts(2), ev("done", final_text="x")])
    await collect(client.follow("old"))
    assert await collect(client.follow("old", last_seq=lambda: 3)) == []
    assert sleeps.delays == [] and len(fake.requests_to("GET", "/runs/old/events")) == 2


async def test_5xx_while_reconnecting_backs_off_and_retries(
    fake: FakeBridge, client: BridgeClient, sleeps: Sleeps
) -> None:
    fake.script("run-1", [*texts(2), Drop(), *texts(1, 3), ev("done", final_text="ok")])
    fake.fail("events", 503, times=3)
    assert seqs(await collect(client.stream(request()))) == [1, 2, 3, 4]
    assert sleeps.delays == [0.01, 0.02, 0.04, 0.08]


async def test_gives_up_after_max_reconnects(
    fake: FakeBridge, client: BridgeClient, sleeps: Sleeps
) -> None:
    fake.script("run-1", [*texts(1), Drop(), ev("done", final_text="ok")])
    fake.fail("events", 500, times=10)
    with pytest.raises(BridgeUnavailable, match="lost the event stream of run run-1 after 4"):
        await collect(client.stream(request()))
    assert len(sleeps.delays) == 4


async def test_bridge_restart_mid_run_resumes(
    fake: FakeBridge, client: BridgeClient, sleeps: Sleeps
) -> None:
    fake.script("run-1", [*texts(2), Stall("hold"), *texts(2, 3), ev("done", final_text="ok")])

    async def restart_on_second_backoff(count: int) -> None:
        if count == 2:
            await fake.start()

    sleeps.hook = restart_on_second_backoff
    stream = client.stream(request())
    first = [await anext(stream), await anext(stream)]
    await fake.stop()  # cuts the held connection; the first reconnect finds nobody listening
    rest = await collect(stream)
    assert seqs(first + rest) == [1, 2, 3, 4, 5]
    assert len(sleeps.delays) == 2


async def test_clarify_flow_over_the_stream(fake: FakeBridge, client: BridgeClient) -> None:
    fake.script("run-1", [
        ev("clarify_request", clarify_id="k1", question="Which?", choices=["a", "b"]),
        WaitAnswer("k1"), ev("done", final_text="went with a"),
    ])
    events: list[Event] = []
    async with asyncio.timeout(5):
        async for event in client.stream(request()):
            events.append(event)
            if isinstance(event, ClarifyRequest):
                state = await client.run_state("run-1")
                assert state.state == "waiting_clarify"
                assert state.pending_clarify == ClarifyInfo("k1", "Which?", ("a", "b"))
                assert await client.answer_clarify("k1", "a") == "run-1"
    assert isinstance(events[-1], Done) and fake.runs["run-1"].answers == {"k1": "a"}
    with pytest.raises(Conflict, match="already answered"):
        await client.answer_clarify("k1", "b")
    with pytest.raises(NotFound):
        await client.answer_clarify("nope", "b")


async def test_abort_ends_the_stream_with_an_aborted_error(fake: FakeBridge, client: BridgeClient) -> None:
    fake.script("run-1", [*texts(1), Stall("forever", heartbeat=0.05), ev("done", final_text="no")])
    stream = client.stream(request())
    await anext(stream)
    assert await client.abort("run-1") == "error"
    [last] = await collect(stream)
    assert isinstance(last, RunError) and last.code == "aborted" and last.seq == 2
    with pytest.raises(Conflict, match="already finished"):
        await client.abort("run-1")
    with pytest.raises(NotFound):
        await client.abort("ghost")


# --- plain calls --------------------------------------------------------------------------

async def test_run_state(fake: FakeBridge, client: BridgeClient) -> None:
    fake.add_run("r", [*texts(2), ev("done", final_text="x")], session_id="chat-9")
    await collect(client.follow("r"))
    state = await client.run_state("r")
    assert (state.state, state.session_id, state.last_event_id) == ("done", "chat-9", 3)
    assert (await client.run_state("never")).state == "unknown"


async def test_sessions_memory_and_health(fake: FakeBridge, client: BridgeClient) -> None:
    await collect(client.stream(request()))
    assert await client.reset_session("chat-1") is True
    assert await client.reset_session("chat-1") is False
    assert (await client.get_memory("chat-1")).memory == ""
    updated = await client.set_memory("chat-1", memory="likes tea")
    assert (updated.memory, updated.user) == ("likes tea", "")
    assert fake.requests_to("POST", "/sessions/chat-1/memory")[0].body == {"memory": "likes tea"}
    assert (await client.get_memory("chat-1")).memory == "likes tea"
    health = await client.health()
    assert (health.status, health.runs) == ("ok", 1)


async def test_ids_are_escaped_in_paths(fake: FakeBridge, client: BridgeClient) -> None:
    state = await client.run_state("a/b c")
    assert (state.run_id, state.state) == ("a/b c", "unknown")
    assert fake.requests[-1].raw_path == "/runs/a%2Fb%20c"


@pytest.mark.parametrize(("status", "error"), [(404, NotFound), (409, Conflict), (400, InvalidInput),
                                               (422, InvalidInput), (500, BridgeUnavailable),
                                               (401, BridgeUnavailable)])
async def test_error_answers_map_to_core_errors(
    fake: FakeBridge, client: BridgeClient, status: int, error: type[Exception]
) -> None:
    fake.fail("health", status)
    with pytest.raises(error, match=f"injected {status} on health"):
        await client.health()


async def test_calls_when_the_bridge_is_down(fake: FakeBridge, client: BridgeClient) -> None:
    await fake.stop()
    with pytest.raises(BridgeUnavailable, match="did not answer"):
        await client.health()


async def test_garbage_answers_are_bridge_unavailable() -> None:
    transport = httpx.MockTransport(lambda req: httpx.Response(200, text="<html>hi</html>"))
    async with httpx.AsyncClient(transport=transport) as http:
        bridge = BridgeClient("http://bridge.invalid", http=http, policy=POLICY)
        with pytest.raises(BridgeUnavailable, match="garbage to GET /health"):
            await bridge.health()
        with pytest.raises(BridgeUnavailable, match="garbage"):
            await collect(bridge.stream(request()))


async def test_a_refused_token_says_so(fake: FakeBridge, client: BridgeClient) -> None:
    fake.fail("health", 401, code="unauthorized")
    with pytest.raises(BridgeUnavailable, match="BRIDGE_TOKEN must be the same on both sides"):
        await client.health()


async def test_the_token_goes_with_every_call_and_stream(fake: FakeBridge) -> None:
    fake.script("run-t", [ev("text", text="a"), Drop(), ev("done", final_text="a")])
    async with BridgeClient(fake.url, policy=POLICY, token="tok-9c8b") as bridge:
        await collect(bridge.stream(request("run-t")))  # POST /run, then a reconnect
        await bridge.health()
        await bridge.run_state("run-t")
        await bridge.reset_session("chat-1")
    assert len(fake.requests) >= 5
    assert {r.headers.get("Authorization") for r in fake.requests} == {"Bearer tok-9c8b"}


async def test_a_given_http_client_is_used_and_left_open(fake: FakeBridge) -> None:
    async with httpx.AsyncClient() as http:
        bridge: Bridge = BridgeClient(fake.url + "/", http=http)
        assert (await bridge.health()).status == "ok"
        await BridgeClient(fake.url, http=http).aclose()
        assert not http.is_closed
