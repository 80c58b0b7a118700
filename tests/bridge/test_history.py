"""`history` decides what the agent sees; without it the Bridge keeps the session's own."""

from __future__ import annotations

from tests.bridge.harness import RunningBridge, run_body, run_to_end
from tests.fakes.llm_server import ScriptedLLM, text_reply

BRANCH = [
    {"role": "user", "content": "What is 2+2?"},
    {"role": "assistant", "content": "4"},
    {"role": "user", "content": "And 3+3?"},
    {"role": "assistant", "content": "6"},
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
    assert events[-1].data == {"final_text": "8"}
    assert dialogue(llm.requests[0]) == [*BRANCH, {"role": "user", "content": "And 4+4?"}]


async def test_without_history_the_bridge_remembers_the_session(
    bridge: RunningBridge, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("Nice to meet you, Ada."), text_reply("You are Ada."))
    first = run_body(llm, "I am Ada.")
    await run_to_end(bridge, first)
    second = run_body(llm, "Who am I?", session_id=first["session_id"])
    await run_to_end(bridge, second)
    assert dialogue(llm.requests[1]) == [
        {"role": "user", "content": "I am Ada."},
        {"role": "assistant", "content": "Nice to meet you, Ada."},
        {"role": "user", "content": "Who am I?"},
    ]


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
