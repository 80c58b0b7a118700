"""Each model call's usage as a `usage` event (docs/bridge-protocol.md): the tokens the provider
reported, before the step's checkpoint, and nothing for a call that reported none."""

from __future__ import annotations

from bridge.usage import usage_data
from tests.bridge.harness import RunningBridge, names, run_body, run_to_end
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply

TODO = {"todos": [{"id": "1", "content": "count", "status": "in_progress"}]}


async def test_each_model_call_reports_its_usage_before_its_steps_checkpoint(
    bridge: RunningBridge, llm: ScriptedLLM
) -> None:
    llm.script(tool_reply(ToolCall("todo", TODO)),
               text_reply("Counted.", prompt_tokens=250, completion_tokens=7, cached_tokens=200))

    events = await run_to_end(bridge, run_body(llm, "count"))

    usage = [e.data for e in events if e.name == "usage"]
    assert usage == [
        {"model": llm.model, "prompt_tokens": 100, "completion_tokens": 10, "cached_tokens": 0},
        {"model": llm.model, "prompt_tokens": 250, "completion_tokens": 7, "cached_tokens": 200},
    ]
    order = names(events)
    first = order.index("usage")
    assert first < order.index("tool_start") < order.index("checkpoint")  # before its tools
    assert order.index("checkpoint") < len(order) - 1 - order[::-1].index("usage")
    ids = [e.id for e in events if e.name != "checkpoint"]
    assert ids == list(range(1, len(ids) + 1))  # an event like any other: its own id


async def test_the_tap_leaves_the_agent_as_it_was_for_the_next_turn(
    bridge: RunningBridge, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("one"), text_reply("two"))
    body = run_body(llm, "first")
    await run_to_end(bridge, body)
    second = {**run_body(llm, "second"), "session_id": body["session_id"]}

    events = await run_to_end(bridge, second)

    assert names(events).count("usage") == 1  # one call, counted once: no tap left behind


def test_a_call_without_usage_reports_nothing_and_odd_counts_are_read_as_zero() -> None:
    assert usage_data({}, "m") is None
    assert usage_data(None, "m") is None
    odd = {"prompt_tokens": "12", "completion_tokens": None, "cache_read_tokens": -3}
    assert usage_data(odd, "m") == {"model": "m", "prompt_tokens": 12, "completion_tokens": 0,
                                    "cached_tokens": 0}
