"""Disconnects: the run goes on; Last-Event-ID replays exactly what was missed."""

from __future__ import annotations

import asyncio

from tests.bridge.harness import RunningBridge, SseReader, read_sse, run_body
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply


async def state_of(bridge: RunningBridge, run_id: str) -> str:
    return (await bridge.client.get(f"/runs/{run_id}")).json()["state"]


async def test_disconnect_then_resume_sees_every_event_once(
    bridge: RunningBridge, llm: ScriptedLLM
) -> None:
    gate = asyncio.Event()
    llm.script(tool_reply(ToolCall("todo", {"todos": [{"id": "1", "content": "a",
                                                       "status": "in_progress"}]})),
               text_reply("a fairly long answer " * 10, gate=gate))
    body = run_body(llm, "go")
    async with bridge.client.stream("POST", "/run", json=body) as response:
        first = await SseReader(response).until_event("text")  # then hang up mid-stream

    headers = {"Last-Event-ID": str(first[-1].id)}
    async with bridge.client.stream("GET", f"/runs/{body['run_id']}/events",
                                    headers=headers) as response:
        assert await state_of(bridge, body["run_id"]) == "running"  # the run went on
        gate.set()
        rest = await read_sse(response)

    async with bridge.client.stream("GET", f"/runs/{body['run_id']}/events") as response:
        everything = await read_sse(response)
    assert first + rest == everything
    ids = [e.id for e in everything if e.name != "checkpoint"]  # it repeats the id before it
    assert ids == list(range(1, len(ids) + 1))
    assert everything[-1].name == "done"


async def test_run_finishes_without_any_listener(bridge: RunningBridge, llm: ScriptedLLM) -> None:
    gate = asyncio.Event()
    llm.script(text_reply("nobody is listening", gate=gate))
    body = run_body(llm)
    async with bridge.client.stream("POST", "/run", json=body) as response:
        await SseReader(response).until_event("text")
    gate.set()
    await wait_until_done(bridge, body["run_id"])

    headers = {"Last-Event-ID": "1"}
    async with bridge.client.stream("GET", f"/runs/{body['run_id']}/events",
                                    headers=headers) as response:
        rest = await read_sse(response)
    assert rest[0].id == 2 and rest[-1].data == {"final_text": "nobody is listening", "model": llm.model}


async def wait_until_done(bridge: RunningBridge, run_id: str) -> None:
    """Poll GET /runs/{id} with a deadline."""
    async with asyncio.timeout(20):
        while await state_of(bridge, run_id) != "done":
            await asyncio.sleep(0.02)


async def test_heartbeats_while_nothing_happens(bridge: RunningBridge, llm: ScriptedLLM) -> None:
    gate = asyncio.Event()
    llm.script(text_reply("slow", gate=gate))
    async with bridge.client.stream("POST", "/run", json=run_body(llm)) as response:
        reader = SseReader(response)
        await reader.until(stop_on_comment=True)
        assert reader.comments == [": keep-alive"]
        gate.set()
        assert (await reader.until())[-1].name == "done"


async def test_replay_after_the_end_and_unknown_runs(bridge: RunningBridge) -> None:
    missing = await bridge.client.get("/runs/run-missing/events")
    assert missing.status_code == 404 and missing.json()["code"] == "run_not_found"
    unknown = (await bridge.client.get("/runs/run-missing")).json()
    assert unknown["state"] == "unknown" and unknown["last_event_id"] == 0


async def test_replay_of_a_finished_run_from_any_point(
    bridge: RunningBridge, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("done quickly"))
    body = run_body(llm)
    async with bridge.client.stream("POST", "/run", json=body) as response:
        everything = await read_sse(response)
    for cursor in range(len(everything) + 1):
        headers = {"Last-Event-ID": str(cursor)}
        async with bridge.client.stream("GET", f"/runs/{body['run_id']}/events",
                                        headers=headers) as response:
            assert await read_sse(response) == everything[cursor:]
