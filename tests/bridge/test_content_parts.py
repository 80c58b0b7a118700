"""A user message that came with files reaches the model as content parts: the text part
(the message, the files' text) and an `image_url` part per image, in the turn and in history."""

from __future__ import annotations

from tests.bridge.harness import RunningBridge, run_body, run_to_end
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply

PIXEL = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9"
         "awAAAABJRU5ErkJggg==")
PARTS = [{"type": "text", "text": "What is in the picture?"},
         {"type": "image_url", "image_url": {"url": PIXEL}}]


def user_messages(request: dict) -> list[object]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


async def test_the_user_content_is_the_models_user_message(
    bridge: RunningBridge, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("A red pixel."))
    body = run_body(llm, "What is in the picture?", user_content=PARTS, history=[])
    events = await run_to_end(bridge, body)
    assert events[-1].data == {"final_text": "A red pixel.", "model": llm.model}
    assert user_messages(llm.requests[0]) == [PARTS]


async def test_history_keeps_the_parts_of_an_earlier_message(
    bridge: RunningBridge, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("It is red."))
    history = [{"role": "user", "content": PARTS}, {"role": "assistant", "content": "A pixel."}]
    await run_to_end(bridge, run_body(llm, "Which colour?", history=history))
    assert user_messages(llm.requests[0]) == [PARTS, "Which colour?"]


async def test_a_checkpoint_keeps_the_parts_and_a_continuation_sends_them(
    bridge: RunningBridge, llm: ScriptedLLM
) -> None:
    todo = {"todos": [{"id": "1", "content": "look", "status": "in_progress"}]}
    llm.script(tool_reply(ToolCall("todo", todo, call_id="call-todo")), text_reply("Seen."),
               text_reply("Seen again."))
    events = await run_to_end(bridge, run_body(llm, "What is it?", user_content=PARTS))
    [point] = [e for e in events if e.name == "checkpoint"]
    assert point.data["messages"][0] == {"role": "user", "content": PARTS}
    resume = {"first_event_id": 10, "messages": point.data["messages"]}
    await run_to_end(bridge, run_body(llm, "What is it?", user_content=PARTS, resume=resume))
    assert user_messages(llm.requests[2]) == [PARTS]


async def test_an_image_larger_than_litestars_default_body_limit_gets_through(
    bridge: RunningBridge, llm: ScriptedLLM
) -> None:
    """12 MB of image: over Litestar's 10 MB default, well under ATTACHMENT_MAX_BYTES."""
    big = "data:image/png;base64," + "A" * (12 * 1024 * 1024)
    parts = [{"type": "text", "text": "Big one"}, {"type": "image_url", "image_url": {"url": big}}]
    llm.script(text_reply("Large."))
    events = await run_to_end(bridge, run_body(llm, "Big one", user_content=parts, history=[]))
    assert events[-1].data == {"final_text": "Large.", "model": llm.model}
    assert user_messages(llm.requests[0])[0][1]["image_url"]["url"] == big
