"""Clarify: the agent blocks until the answer, which the model then sees."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

import httpx

from bridge.settings import BridgeSettings
from tests.bridge.harness import (
    Event,
    RunningBridge,
    SseReader,
    names,
    run_body,
    run_to_end,
    running_bridge,
)
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply

QUESTION = {"question": "Which colour?", "choices": ["red", "blue", "green", "teal", "pink"]}


def tool_results(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


async def test_clarify_blocks_until_answered(bridge: RunningBridge, llm: ScriptedLLM) -> None:
    llm.script(tool_reply(ToolCall("clarify", QUESTION)), text_reply("You chose blue."))
    body = run_body(llm, "paint it")
    async with bridge.client.stream("POST", "/run", json=body) as response:
        reader = SseReader(response)
        before = await reader.until_event("clarify_request")
        ask = before[-1].data
        assert ask["question"] == "Which colour?"
        assert ask["choices"] == ["red", "blue", "green", "teal"]  # at most 4
        state = (await bridge.client.get(f"/runs/{body['run_id']}")).json()
        assert state["state"] == "waiting_clarify"
        assert state["pending_clarify"] == ask
        assert len(llm.requests) == 1  # blocked: the model was not called again

        answer = await bridge.client.post(f"/clarify/{ask['clarify_id']}/answer",
                                          json={"answer": "blue"})
        assert answer.status_code == 200
        assert answer.json() == {"clarify_id": ask["clarify_id"], "run_id": body["run_id"]}
        after = await reader.until()

    assert names(after)[-1] == "done"
    assert after[-1].data["final_text"] == "You chose blue."
    assert json.loads(tool_results(llm.requests[1])[-1])["user_response"] == "blue"
    again = await bridge.client.post(f"/clarify/{ask['clarify_id']}/answer", json={"answer": "x"})
    assert again.status_code == 409 and again.json()["code"] == "clarify_answered"


async def test_unknown_clarify_is_404(bridge: RunningBridge) -> None:
    response = await bridge.client.post("/clarify/clr-nope/answer", json={"answer": "x"})
    assert response.status_code == 404
    assert response.json()["code"] == "clarify_not_found"


async def test_one_session_waits_on_clarify_while_another_finishes(
    bridge: RunningBridge, llm: ScriptedLLM
) -> None:
    asking = run_body(llm, "ask me")
    llm.script(tool_reply(ToolCall("clarify", {"question": "Sure?"}),
                          match=lambda b: "ask me" in json.dumps(b["messages"])))
    async with bridge.client.stream("POST", "/run", json=asking) as response:
        reader = SseReader(response)
        ask = (await reader.until_event("clarify_request"))[-1].data
        assert ask["choices"] == []

        llm.script(text_reply("quick answer", match=lambda b: "other" in json.dumps(b["messages"])))
        other = await asyncio.wait_for(run_to_end(bridge, run_body(llm, "other")), 20)
        assert other[-1].data == {"final_text": "quick answer", "model": llm.model}

        llm.script(text_reply("thanks"))
        await bridge.client.post(f"/clarify/{ask['clarify_id']}/answer", json={"answer": "yes"})
        assert (await reader.until())[-1].name == "done"


async def test_turns_of_one_session_run_one_after_the_other(
    bridge: RunningBridge, llm: ScriptedLLM
) -> None:
    first = run_body(llm, "first")
    session = first["session_id"]
    llm.script(tool_reply(ToolCall("clarify", {"question": "Go on?"})))
    async with bridge.client.stream("POST", "/run", json=first) as first_response:
        first_reader = SseReader(first_response)
        ask = (await first_reader.until_event("clarify_request"))[-1].data
        second = run_body(llm, "second", session_id=session)
        third = run_body(llm, "third", session_id=session)
        async with bridge.client.stream("POST", "/run", json=second) as second_response, \
                bridge.client.stream("POST", "/run", json=third) as third_response:
            second_reader = SseReader(second_response)
            assert await second_reader.until(stop_on_comment=True) == []  # queued: only heartbeats
            assert len(llm.requests) == 1

            await bridge.client.post(f"/runs/{third['run_id']}/abort")  # aborting a queued run
            assert (await read_all(third_response))[-1].data["code"] == "aborted"

            llm.script(text_reply("first done"), text_reply("second done"))
            await bridge.client.post(f"/clarify/{ask['clarify_id']}/answer", json={"answer": "y"})
            assert (await first_reader.until())[-1].data == {"final_text": "first done", "model": llm.model}
            assert (await second_reader.until())[-1].data == {"final_text": "second done", "model": llm.model}
    assert len(llm.requests) == 3  # the aborted third run never reached the model


async def read_all(response: httpx.Response) -> list[Event]:
    return await SseReader(response).until()


async def test_unanswered_clarify_expires_after_the_fallback(
    bridge_settings: BridgeSettings, llm: ScriptedLLM
) -> None:
    async with running_bridge(replace(bridge_settings, clarify_fallback_seconds=0.2)) as quick:
        llm.script(tool_reply(ToolCall("clarify", {"question": "Anyone?"})))
        events = await run_to_end(quick, run_body(llm))
        ask = next(e for e in events if e.name == "clarify_request")
        assert names(events)[-1] == "error" and events[-1].data["code"] == "clarify_expired"
        late = await quick.client.post(f"/clarify/{ask.data['clarify_id']}/answer",
                                       json={"answer": "me"})
        assert late.status_code == 409
