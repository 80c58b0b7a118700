"""Bad requests get 4xx `{code, message}`; a broken LLM gets an `error` event; the Bridge
keeps serving either way."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from tests.bridge.harness import RunningBridge, names, new_id, run_body, run_to_end
from tests.fakes.llm_server import ScriptedLLM, error_reply, garbage_reply, text_reply


def valid() -> dict[str, Any]:
    return {"run_id": new_id("run"), "session_id": new_id("chat"), "user_message": "hi",
            "model": {"name": "m", "base_url": "http://127.0.0.1:9/v1"}}


BAD_RUNS: list[tuple[str, Any]] = [
    ("not json", b"{not json"),
    ("empty body", b""),
    ("a list", b"[]"),
    ("missing user_message", {k: v for k, v in valid().items() if k != "user_message"}),
    ("missing run_id", {k: v for k, v in valid().items() if k != "run_id"}),
    ("blank message", {**valid(), "user_message": "   "}),
    ("wrong type", {**valid(), "user_message": 42}),
    ("bad run_id", {**valid(), "run_id": "../../etc"}),
    ("iterations 0", {**valid(), "max_iterations": 0}),
    ("iterations 501", {**valid(), "max_iterations": 501}),
    ("bad role", {**valid(), "history": [{"role": "tool", "content": "x"}]}),
    ("model without name", {**valid(), "model": {"base_url": "http://127.0.0.1:9/v1"}}),
    ("empty content parts", {**valid(), "user_content": []}),
    ("unknown part type", {**valid(), "user_content": [{"type": "audio", "audio": "x"}]}),
    ("image not a data URL", {**valid(), "user_content": [
        {"type": "image_url", "image_url": {"url": "http://127.0.0.1:9/a.png"}}]}),
    ("image of another type", {**valid(), "user_content": [
        {"type": "image_url", "image_url": {"url": "data:image/svg+xml;base64,PHN2Zz4="}}]}),
    ("history part without text", {**valid(), "history": [
        {"role": "user", "content": [{"type": "text"}]}]}),
    ("no model anywhere", {k: v for k, v in valid().items() if k != "model"}),
]


@pytest.mark.parametrize(("label", "body"), BAD_RUNS, ids=[b[0] for b in BAD_RUNS])
async def test_bad_run_requests_are_400(bridge: RunningBridge, label: str, body: Any) -> None:
    kwargs = {"content": body} if isinstance(body, bytes) else {"json": body}
    response = await bridge.client.post("/run", **kwargs)
    assert response.status_code == 400, label
    assert response.json()["code"] == "invalid_request"
    assert response.json()["message"]


async def test_duplicate_run_id_is_409(bridge: RunningBridge, llm: ScriptedLLM) -> None:
    llm.script(text_reply("once"))
    body = run_body(llm)
    await run_to_end(bridge, body)
    again = await bridge.client.post("/run", json=body)
    assert again.status_code == 409 and again.json()["code"] == "run_exists"


@pytest.mark.parametrize(("method", "path", "kwargs", "status", "code"), [
    ("GET", "/runs/run-x/events", {"headers": {"Last-Event-ID": "abc"}}, 400, "invalid_request"),
    ("POST", "/clarify/clr-x/answer", {"content": b"nope"}, 400, "invalid_request"),
    ("POST", "/clarify/clr-x/answer", {"json": {"answer": 3}}, 400, "invalid_request"),
    ("POST", "/sessions/chat-x/memory", {"json": {"memory": 5}}, 400, "invalid_request"),
    ("POST", "/sessions/bad id/reset", {}, 400, "invalid_request"),
    ("GET", "/no/such/route", {}, 404, "not_found"),
    ("GET", "/run", {}, 405, "method_not_allowed"),
])
async def test_other_bad_requests(bridge: RunningBridge, method: str, path: str,
                                  kwargs: dict[str, Any], status: int, code: str) -> None:
    response = await bridge.client.request(method, path, **kwargs)
    assert response.status_code == status
    assert response.json()["code"] == code


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_llm_down_is_an_error_event_and_the_bridge_keeps_serving(
    bridge: RunningBridge, llm: ScriptedLLM
) -> None:
    down = {"name": "m", "base_url": f"http://127.0.0.1:{closed_port()}/v1"}
    events = await run_to_end(bridge, {**run_body(llm), "model": down})
    assert names(events)[-1] == "error"
    assert events[-1].data["code"] == "llm_error"
    assert "connection" in events[-1].data["message"].lower()

    assert (await bridge.client.get("/health")).json()["status"] == "ok"
    llm.script(text_reply("still here"))
    assert (await run_to_end(bridge, run_body(llm)))[-1].data == {"final_text": "still here", "model": llm.model}


@pytest.mark.parametrize(("broken", "said"), [(garbage_reply(), "stream"),
                                              (error_reply(500, "model exploded"),
                                               "HTTP 500: model exploded")],
                         ids=["garbage", "http-500"])
async def test_llm_garbage_is_an_error_event(bridge: RunningBridge, llm: ScriptedLLM,
                                             broken: Any, said: str) -> None:
    llm.script(broken, broken, broken, broken)
    events = await run_to_end(bridge, run_body(llm))
    assert events[-1].name == "error" and events[-1].data["code"] == "llm_error"
    message = events[-1].data["message"]
    assert message.startswith("LLM error: ") and said in message  # says what went wrong
