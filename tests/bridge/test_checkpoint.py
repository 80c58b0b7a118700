"""Checkpoints and continuations: the Bridge emits the agent's messages after each completed
step and at a clarify, and any Bridge process continues a turn from them (docs/architecture.md,
"Durable turns")."""

from __future__ import annotations

import json

from bridge.checkpoints import RESUME_MARKER
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

TODO = {"todos": [{"id": "1", "content": "paint", "status": "in_progress"}]}


def checkpoints(events: list[Event]) -> list[Event]:
    return [e for e in events if e.name == "checkpoint"]


async def test_a_checkpoint_follows_each_completed_step(bridge: RunningBridge,
                                                         llm: ScriptedLLM) -> None:
    llm.script(tool_reply(ToolCall("todo", TODO, call_id="call-todo")), text_reply("Painted."))
    events = await run_to_end(bridge, run_body(llm, "paint the fence"))

    [point] = checkpoints(events)
    assert names(events)[names(events).index("checkpoint") + 1] == "step"  # step 2 begins
    messages = point.data["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    assert messages[0]["content"] == "paint the fence"
    assert messages[1]["tool_calls"][0]["id"] == "call-todo"
    assert messages[2]["tool_call_id"] == "call-todo"
    assert not any(k.startswith("_") for m in messages for k in m)  # hermes' private keys
    assert point.data["clarify"] is None
    others = [e.id for e in events if e.name != "checkpoint"]
    assert others == list(range(1, len(others) + 1))  # a checkpoint takes no id of its own
    assert point.id == events[events.index(point) - 1].id


async def test_a_clarify_is_checkpointed_before_it_is_asked(bridge: RunningBridge,
                                                            llm: ScriptedLLM) -> None:
    llm.script(tool_reply(ToolCall("clarify", {"question": "Which colour?",
                                               "choices": ["red", "blue"]}, call_id="call-ask")))
    body = run_body(llm, "paint it")
    async with bridge.client.stream("POST", "/run", json=body) as response:
        events = await SseReader(response).until_event("clarify_request")
        await bridge.client.post(f"/runs/{body['run_id']}/abort")
    point, ask = events[-2], events[-1]
    assert point.name == "checkpoint"
    assert point.data["clarify"] == {"call_id": "call-ask",
                                     "clarify_id": ask.data["clarify_id"]}
    assert point.data["messages"][-1]["tool_calls"][0]["id"] == "call-ask"


async def test_another_bridge_continues_a_clarify_with_its_answer(
    bridge_settings: BridgeSettings, llm: ScriptedLLM
) -> None:
    llm.script(tool_reply(ToolCall("clarify", {"question": "Which colour?",
                                               "choices": ["red", "blue"]}, call_id="call-ask")))
    body = run_body(llm, "paint it")
    async with running_bridge(bridge_settings) as first:
        async with first.client.stream("POST", "/run", json=body) as response:
            before = await SseReader(response).until_event("clarify_request")
    point = before[-2]

    llm.script(text_reply("Blue it is."))
    resume = {"first_event_id": before[-1].id + 1, "messages": point.data["messages"],
              "clarify": {"call_id": "call-ask", "answer": "blue"}}
    async with running_bridge(bridge_settings) as second:  # a new process knows nothing
        after = await run_to_end(second, {**body, "resume": resume})

    first = before[-1].id + 1
    assert [e.id for e in after] == list(range(first, first + len(after)))
    assert after[0].name == "status" and after[0].data["category"] == "resumed"
    assert after[-1].name == "done" and after[-1].data["final_text"] == "Blue it is."
    seen = llm.requests[-1]["messages"]
    assert seen[-1]["role"] == "tool" and seen[-1]["tool_call_id"] == "call-ask"
    assert json.loads(seen[-1]["content"])["user_response"] == "blue"
    assert [m["content"] for m in seen if m["role"] == "user"] == ["paint it"]
    assert RESUME_MARKER not in json.dumps(llm.requests)


async def test_a_turn_cut_mid_step_is_driven_again_from_its_checkpoint(
    bridge: RunningBridge, llm: ScriptedLLM
) -> None:
    llm.script(tool_reply(ToolCall("todo", TODO, call_id="call-todo")), text_reply("Painted."))
    first = await run_to_end(bridge, run_body(llm, "paint the fence"))
    [point] = checkpoints(first)

    llm.script(text_reply("Painted again."))
    body = run_body(llm, "paint the fence", resume={"first_event_id": 40,
                                                    "messages": point.data["messages"]})
    again = await run_to_end(bridge, body)
    assert again[0].id == 40 and again[0].data["category"] == "resumed"
    assert again[-1].data["final_text"] == "Painted again."
    seen = llm.requests[-1]["messages"]
    assert [m["role"] for m in seen if m["role"] != "system"] == ["user", "assistant", "tool"]


async def test_a_resume_without_messages_is_refused(bridge: RunningBridge,
                                                    llm: ScriptedLLM) -> None:
    response = await bridge.client.post("/run", json=run_body(llm, resume={"first_event_id": 0,
                                                                            "messages": []}))
    assert response.status_code == 400 and response.json()["code"] == "invalid_request"
