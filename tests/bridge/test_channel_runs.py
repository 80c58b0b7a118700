"""What a channel's settings ask of a run on the Bridge (real agent loop, scripted LLM): its
toolsets (within BRIDGE_TOOLSETS), its approval policy (`deny`: refused, nobody asked), and a
busy thread's guidance (`POST /runs/{id}/steer`: hermes-agent's steer, read at the next step)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest

from bridge.settings import BridgeSettings
from tests.bridge.harness import (
    RunningBridge,
    SseReader,
    names,
    new_id,
    run_body,
    run_to_end,
    running_bridge,
    wait_until,
)
from tests.fakes.llm_server import RequestBody, ScriptedLLM, ToolCall, text_reply, tool_reply

def tool_names(request: RequestBody) -> set[str]:
    """The tools a model call offered."""
    return {tool["function"]["name"] for tool in request.get("tools") or []}


def tool_results(request: RequestBody) -> list[str]:
    """What the tools answered, as the next model call got it."""
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


TODO = ToolCall("todo", {"todos": [{"id": "1", "content": "measure", "status": "pending"}]})


async def test_a_runs_toolsets_are_its_channels(bridge: RunningBridge, llm: ScriptedLLM) -> None:
    llm.script(text_reply("hi"), text_reply("none"))
    events = await run_to_end(bridge, run_body(llm, toolsets=["todo"]))
    assert names(events)[-1] == "done" and tool_names(llm.requests[-1]) == {"todo"}
    session = new_id("chat")
    await run_to_end(bridge, run_body(llm, session_id=session, toolsets=[]))
    assert tool_names(llm.requests[-1]) == set()


async def test_a_toolset_the_bridge_does_not_enable_is_refused(
        bridge: RunningBridge, llm: ScriptedLLM) -> None:
    answer = await bridge.client.post("/run", json=run_body(llm, toolsets=["terminal"]))
    assert answer.status_code == 400
    assert answer.json()["code"] == "toolset_not_allowed" and "terminal" in answer.json()["message"]
    assert llm.requests == []


@pytest.fixture
async def terminal_bridge(bridge_settings: BridgeSettings) -> AsyncIterator[RunningBridge]:
    async with running_bridge(replace(bridge_settings, toolsets=("terminal", "clarify"))) as running:
        yield running


async def test_approvals_deny_refuses_a_flagged_command_without_asking(
        terminal_bridge: RunningBridge, llm: ScriptedLLM, tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    llm.script(tool_reply(ToolCall("terminal", {"command": f"rm -rf {victim}"})),
               text_reply("I was not allowed."))
    events = await run_to_end(terminal_bridge, run_body(llm, "clean up", approvals="deny"))
    assert "approval_request" not in names(events) and names(events)[-1] == "done"
    assert "BLOCKED" in tool_results(llm.requests[1])[-1]
    assert victim.exists()


async def test_guidance_reaches_the_running_turn_at_its_next_step(
        bridge: RunningBridge, llm: ScriptedLLM) -> None:
    gate = asyncio.Event()
    llm.script(tool_reply(TODO, gate=gate), text_reply("In metres."))
    body = run_body(llm, "measure the shed")
    async with bridge.client.stream("POST", "/run", json=body) as response:
        reader = SseReader(response)
        await wait_until(lambda: len(llm.requests) == 1)  # its first model call is streaming
        steered = await bridge.client.post(f"/runs/{body['run_id']}/steer",
                                           json={"text": "use metric units"})
        assert steered.status_code == 200, steered.text
        assert steered.json() == {"run_id": body["run_id"], "accepted": True}
        gate.set()
        events = await reader.until()
    assert names(events)[-1] == "done"
    assert any("use metric units" in result for result in tool_results(llm.requests[1]))
    ended = await bridge.client.post(f"/runs/{body['run_id']}/steer", json={"text": "late"})
    assert (ended.status_code, ended.json()["code"]) == (409, "run_finished")


@pytest.mark.parametrize(("run_id", "body", "status", "code"), [
    ("run-nobody-knows", {"text": "hello"}, 404, "run_not_found"),
    ("run-x", {"text": ""}, 400, "invalid_request"),
    ("run-x", {"words": "hello"}, 400, "invalid_request"),
])
async def test_bad_guidance_is_refused(bridge: RunningBridge, run_id: str, body: dict,
                                       status: int, code: str) -> None:
    answer = await bridge.client.post(f"/runs/{run_id}/steer", json=body)
    assert (answer.status_code, answer.json()["code"]) == (status, code)
