"""A turn streamed over POST /run: tools, todos, coalesced text, done."""

from __future__ import annotations

from tests.bridge.harness import RunningBridge, names, run_body, run_to_end, text_of
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply

TODOS = [
    {"id": "1", "content": "read the brief", "status": "completed"},
    {"id": "2", "content": "write the code", "status": "in_progress"},
    {"id": "3", "content": "x" * 400, "status": "pending"},
    {"id": "4", "content": "y" * 400, "status": "pending"},
]
ANSWER = "All planned. " + "Here is a long streamed answer. " * 20


async def test_todo_turn_streams_todos_text_and_done(
    bridge: RunningBridge, llm: ScriptedLLM
) -> None:
    llm.script(tool_reply(ToolCall("todo", {"todos": TODOS})), text_reply(ANSWER, chunk_size=2))

    events = await run_to_end(bridge, run_body(llm, "plan it"))

    ids = [e.id for e in events if e.name != "checkpoint"]  # it repeats the id before it
    assert ids == list(range(1, len(ids) + 1))
    todo = next(e for e in events if e.name == "todo_update")
    assert todo.data["todos"] == TODOS  # full, although well over 500 characters
    assert todo.data["summary"]["total"] == 4
    tool_end = next(e for e in events if e.name == "tool_end")
    assert tool_end.data["tool_name"] == "todo" and tool_end.data["is_error"] is False
    assert len(tool_end.data["result"]) > 500  # todo results are never cut
    assert names(events).index("tool_start") < names(events).index("todo_update")
    assert names(events).index("todo_update") < names(events).index("text")
    assert text_of(events).strip() == ANSWER.strip()
    chunks = len(ANSWER) // 2
    assert names(events).count("text") < chunks / 4  # coalesced, not one event per chunk
    assert events[-1].name == "done"
    assert events[-1].data["final_text"].strip() == ANSWER.strip()
    steps = [e.data for e in events if e.name == "step"]
    assert steps == [{"iteration": 1, "prev_tools": []}, {"iteration": 2, "prev_tools": ["todo"]}]
    assert all(e.data["content"] for e in events if e.name == "thinking_status")
    assert names(events).count("thinking_status") == 2  # one per call to the model
    progress = [(e.data["event_name"], e.data["tool_name"]) for e in events
                if e.name == "tool_progress"]
    assert ("tool.started", "todo") in progress and ("tool.completed", "todo") in progress


async def test_long_tool_results_are_cut_at_500(bridge: RunningBridge, llm: ScriptedLLM) -> None:
    long_fact = "remember " + "z" * 900
    # The failed replace answers with the current entries: a result of about 1,100 characters.
    llm.script(tool_reply(ToolCall("memory", {"action": "add", "target": "memory",
                                              "content": long_fact}),
                          ToolCall("memory", {"action": "replace", "target": "memory",
                                              "old_text": "no such entry", "content": "x"})),
               text_reply("noted"))

    events = await run_to_end(bridge, run_body(llm, "remember this"))

    full = [m["content"] for m in llm.requests[1]["messages"] if m["role"] == "tool"]
    ends = [e.data for e in events if e.name == "tool_end"]
    assert [e["tool_name"] for e in ends] == ["memory", "memory"]
    assert ends[0]["result"] == full[0] and len(full[0]) < 500  # short results stay whole
    assert len(full[1]) > 1000 and ends[1]["result"] == full[1][:500]  # the model saw it all
    assert (ends[0]["is_error"], ends[1]["is_error"]) == (False, True)
    assert events[-1].name == "done"


async def test_run_state_after_done(bridge: RunningBridge, llm: ScriptedLLM) -> None:
    llm.script(text_reply("hi there"))
    body = run_body(llm)

    events = await run_to_end(bridge, body)

    state = (await bridge.client.get(f"/runs/{body['run_id']}")).json()
    assert state == {"run_id": body["run_id"], "session_id": body["session_id"],
                     "state": "done", "last_event_id": events[-1].id, "pending_clarify": None,
                     "pending_approval": None}
