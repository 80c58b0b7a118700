"""`history` decides what the agent sees; without it the Bridge keeps the session's own."""

from __future__ import annotations

import asyncio

from tests.bridge.harness import RunningBridge, SseReader, read_sse, run_body, run_to_end
from tests.fakes.llm_server import ScriptedLLM, text_reply

BRANCH = [
    {"role": "user", "content": "What is 2+2?"},
    {"role": "assistant", "content": "4"},
    {"role": "user", "content": "And 3+3?"},
    {"role": "assistant", "content": "6"},
]

# The second turn of a session that began "I am Ada.", as the model must see it.
ADA_ASKS_AGAIN = [
    {"role": "user", "content": "I am Ada."},
    {"role": "assistant", "content": "Nice to meet you, Ada."},
    {"role": "user", "content": "Who am I?"},
]


def dialogue(request: dict) -> list[dict[str, str]]:
    """What the model saw, without hermes' system prompt."""
    return [{"role": m["role"], "content": m["content"]}
            for m in request["messages"] if m["role"] != "system"]


async def test_given_history_is_exactly_what_the_model_sees(
    bridge: RunningBridge, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("8"))
    events = await run_to_end(bridge, run_body(llm, "And 4+4?", history=BRANCH))
    assert events[-1].data == {"final_text": "8", "model": llm.model}
    assert dialogue(llm.requests[0]) == [*BRANCH, {"role": "user", "content": "And 4+4?"}]


async def test_without_history_the_bridge_remembers_the_session(
    bridge: RunningBridge, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("Nice to meet you, Ada."), text_reply("You are Ada."))
    first = run_body(llm, "I am Ada.")
    await run_to_end(bridge, first)
    second = run_body(llm, "Who am I?", session_id=first["session_id"])
    await run_to_end(bridge, second)
    assert dialogue(llm.requests[1]) == ADA_ASKS_AGAIN


async def test_regenerate_on_another_branch_ignores_the_agents_memory_of_this_one(
    bridge: RunningBridge, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("Blue is calm."), text_reply("Red is bold."))
    first = run_body(llm, "Tell me about blue.", history=[])
    await run_to_end(bridge, first)
    # The user edits the first message: the new branch has no "blue" turn at all.
    edit = run_body(llm, "Tell me about red.", session_id=first["session_id"], history=[])
    await run_to_end(bridge, edit)
    assert dialogue(llm.requests[1]) == [{"role": "user", "content": "Tell me about red."}]


async def test_system_prompt_reaches_the_model(bridge: RunningBridge, llm: ScriptedLLM) -> None:
    llm.script(text_reply("Arr."))
    await run_to_end(bridge, run_body(llm, "hi", system_prompt="Talk like a pirate."))
    system = llm.requests[0]["messages"][0]
    assert system["role"] == "system" and "Talk like a pirate." in system["content"]


async def test_a_queued_turn_sees_the_turn_before_it(
    bridge: RunningBridge, llm: ScriptedLLM
) -> None:
    gate = asyncio.Event()
    llm.script(text_reply("Nice to meet you, Ada.", gate=gate), text_reply("You are Ada."))
    first = run_body(llm, "I am Ada.")
    second = run_body(llm, "Who am I?", session_id=first["session_id"])
    async with bridge.client.stream("POST", "/run", json=first) as first_response, \
            bridge.client.stream("POST", "/run", json=second) as second_response:
        first_reader = SseReader(first_response)
        await first_reader.until_event("text")  # the second waits its turn
        gate.set()
        assert (await first_reader.until())[-1].name == "done"
        assert (await read_sse(second_response))[-1].data == {"final_text": "You are Ada.", "model": llm.model}
    assert dialogue(llm.requests[1]) == ADA_ASKS_AGAIN


async def test_a_reset_during_a_turn_forgets_that_turn_too(
    bridge: RunningBridge, llm: ScriptedLLM
) -> None:
    gate = asyncio.Event()
    llm.script(text_reply("Nice to meet you, Ada.", gate=gate), text_reply("Who are you?"))
    first = run_body(llm, "I am Ada.")
    session = first["session_id"]
    async with bridge.client.stream("POST", "/run", json=first) as response:
        reader = SseReader(response)
        await reader.until_event("text")
        reset = await bridge.client.post(f"/sessions/{session}/reset")
        assert reset.json() == {"session_id": session, "dropped": True}
        gate.set()
        assert (await reader.until())[-1].name == "done"  # the turn itself finishes
    await run_to_end(bridge, run_body(llm, "Who am I?", session_id=session))
    assert dialogue(llm.requests[1]) == [{"role": "user", "content": "Who am I?"}]


async def test_a_caller_that_sends_history_keeps_it_the_bridge_does_not(
    bridge: RunningBridge, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("8"), text_reply("Ask me something."))
    given = run_body(llm, "And 4+4?", history=BRANCH)
    await run_to_end(bridge, given)
    # The caller owns this session's conversation: the Bridge kept no copy of it to grow
    # forever, and a run without history starts from nothing.
    await run_to_end(bridge, run_body(llm, "Hi.", session_id=given["session_id"]))
    assert dialogue(llm.requests[1]) == [{"role": "user", "content": "Hi."}]
