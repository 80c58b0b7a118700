"""Abort, reset, the agent pool and per-session memory."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from bridge.settings import BridgeSettings
from tests.bridge.harness import (
    RunningBridge,
    SseReader,
    new_id,
    run_body,
    run_to_end,
    running_bridge,
)
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply


async def test_abort_ends_the_stream_and_frees_the_session(
    bridge: RunningBridge, llm: ScriptedLLM
) -> None:
    gate = asyncio.Event()
    llm.script(text_reply("this will never be finished " * 5, gate=gate))
    body = run_body(llm)
    async with bridge.client.stream("POST", "/run", json=body) as response:
        reader = SseReader(response)
        await reader.until_event("text")
        aborted = await bridge.client.post(f"/runs/{body['run_id']}/abort")
        assert aborted.status_code == 200 and aborted.json()["run_id"] == body["run_id"]
        rest = await reader.until()
    assert rest[-1].name == "error" and rest[-1].data["code"] == "aborted"
    assert (await bridge.client.get(f"/runs/{body['run_id']}")).json()["state"] == "error"
    again = await bridge.client.post(f"/runs/{body['run_id']}/abort")
    assert again.status_code == 409 and again.json()["code"] == "run_finished"

    # The model's stream is still stalled: only interrupt() can free the session's agent.
    llm.script(text_reply("fresh start"))
    after = await run_to_end(bridge, run_body(llm, session_id=body["session_id"]))
    assert after[-1].data == {"final_text": "fresh start", "model": llm.model}
    assert not gate.is_set()


async def test_abort_while_waiting_on_clarify(bridge: RunningBridge, llm: ScriptedLLM) -> None:
    llm.script(tool_reply(ToolCall("clarify", {"question": "Really?"})))
    body = run_body(llm)
    async with bridge.client.stream("POST", "/run", json=body) as response:
        reader = SseReader(response)
        ask = (await reader.until_event("clarify_request"))[-1].data
        await bridge.client.post(f"/runs/{body['run_id']}/abort")
        assert (await reader.until())[-1].data["code"] == "aborted"
    late = await bridge.client.post(f"/clarify/{ask['clarify_id']}/answer", json={"answer": "y"})
    assert late.status_code == 409

    llm.script(text_reply("unblocked"))  # the agent's thread was released
    after = await run_to_end(bridge, run_body(llm, session_id=body["session_id"]))
    assert after[-1].data == {"final_text": "unblocked", "model": llm.model}


async def test_abort_unknown_run_is_404(bridge: RunningBridge) -> None:
    response = await bridge.client.post("/runs/run-nope/abort")
    assert response.status_code == 404 and response.json()["code"] == "run_not_found"


async def test_a_start_that_arrives_after_its_abort_never_runs(
    bridge: RunningBridge, llm: ScriptedLLM
) -> None:
    """A client whose `POST /run` timed out aborts the run (core/agent/bridge/client.py); if the
    POST reaches the Bridge only after that, it must not start an agent nobody follows."""
    llm.script(text_reply("must never be generated"))
    body = run_body(llm)
    aborted = await bridge.client.post(f"/runs/{body['run_id']}/abort")
    assert aborted.status_code == 404 and "will be refused" in aborted.json()["message"]
    late = await bridge.client.post("/run", json=body)
    assert (late.status_code, late.json()["code"]) == (409, "run_exists")
    assert (await bridge.client.get(f"/runs/{body['run_id']}")).json()["state"] == "error"
    async with bridge.client.stream("GET", f"/runs/{body['run_id']}/events") as response:
        events = await SseReader(response).until()
    assert [(e.name, e.data["code"]) for e in events] == [("error", "aborted")]
    assert llm.requests == []


async def test_reset_drops_the_agent_and_its_history(
    bridge: RunningBridge, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("first"), text_reply("second"))
    first = run_body(llm, "remember me")
    await run_to_end(bridge, first)
    session = first["session_id"]

    reset = await bridge.client.post(f"/sessions/{session}/reset")
    assert reset.json() == {"session_id": session, "dropped": True}
    again = await bridge.client.post(f"/sessions/{session}/reset")
    assert again.json() == {"session_id": session, "dropped": False}

    await run_to_end(bridge, run_body(llm, "who?", session_id=session))
    user_messages = [m for m in llm.requests[1]["messages"] if m["role"] == "user"]
    assert [m["content"] for m in user_messages] == ["who?"]


async def test_pool_keeps_the_most_recently_used_agents(
    bridge_settings: BridgeSettings, llm: ScriptedLLM
) -> None:
    settings = replace(bridge_settings, pool_size=2, openai_base_url=llm.base_url,
                       model=llm.model)
    async with running_bridge(settings) as small:
        first, second, third = (new_id("chat") for _ in range(3))
        for count, session in enumerate([first, second, first, third], start=1):
            llm.script(text_reply(f"hi {session}"))
            body = {"run_id": new_id("run"), "session_id": session, "user_message": "hi"}
            events = await run_to_end(small, body)  # no model: the settings' default
            assert events[-1].data == {"final_text": f"hi {session}", "model": llm.model}
            assert (await small.client.get("/health")).json()["agents"] == min(2, count)
        # `first` was used after `second`, so `second` went when `third` came.
        assert await dropped(small, second) is False
        assert await dropped(small, first) is True
        assert await dropped(small, third) is True


async def dropped(bridge: RunningBridge, session_id: str) -> bool:
    """Reset the session; whether it still had an agent."""
    return (await bridge.client.post(f"/sessions/{session_id}/reset")).json()["dropped"]


async def test_memory_is_per_session(bridge: RunningBridge, llm: ScriptedLLM) -> None:
    llm.script(tool_reply(ToolCall("memory", {"action": "add", "target": "user",
                                              "content": "Ada drinks green tea."})),
               text_reply("Noted."))
    ada = run_body(llm, "I drink green tea.")
    await run_to_end(bridge, ada)
    bob = new_id("chat")

    ada_memory = (await bridge.client.get(f"/sessions/{ada['session_id']}/memory")).json()
    assert "green tea" in ada_memory["user"]
    bob_memory = (await bridge.client.get(f"/sessions/{bob}/memory")).json()
    assert bob_memory == {"session_id": bob, "memory": "", "user": ""}

    llm.script(text_reply("Hello Bob."))
    await run_to_end(bridge, run_body(llm, "hi", session_id=bob))
    assert "green tea" not in llm.requests[-1]["messages"][0]["content"]

    written = await bridge.client.post(f"/sessions/{bob}/memory",
                                       json={"memory": "Bob is a pilot."})
    assert written.json() == {"session_id": bob, "memory": "Bob is a pilot.", "user": ""}
    llm.script(text_reply("Fly safe."))
    await run_to_end(bridge, run_body(llm, "hi again", session_id=bob))
    system = llm.requests[-1]["messages"][0]["content"]
    assert "Bob is a pilot." in system and "green tea" not in system


async def test_shared_memory_is_an_opt_in(bridge_settings: BridgeSettings) -> None:
    async with running_bridge(replace(bridge_settings, shared_memory=True)) as shared:
        one, other = new_id("chat"), new_id("chat")
        await shared.client.post(f"/sessions/{one}/memory", json={"user": "Team uses UTC."})
        try:
            seen = (await shared.client.get(f"/sessions/{other}/memory")).json()
            assert seen == {"session_id": other, "memory": "", "user": "Team uses UTC."}
        finally:  # HERMES_HOME is the whole test process's
            await shared.client.post(f"/sessions/{one}/memory", json={"user": ""})
