"""A scripted OpenAI-compatible chat-completions server on a random 127.0.0.1 port.

Tests queue `Reply` objects; each `POST .../chat/completions` pops the first reply whose
`match` accepts the request (replies without `match` are taken in order). Every request
body (and its Authorization header) is recorded so a test can assert exactly what the model
saw. Every answer reports its usage as OpenAI does (100 prompt + 10 completion tokens unless the
reply says otherwise). Any other path (model metadata probes such as `/models`, `/v1/models/x`, `/api/show`,
`/props`) answers 404.

    async with ScriptedLLM() as llm:
        llm.script(tool_reply(ToolCall("todo", {...})), text_reply("done"))
        ...  # point the code under test at llm.base_url
        assert llm.requests[1]["messages"][-1]["role"] == "tool"
"""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.changes import CHANGES, WAIT

RequestBody = dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    """One function call the scripted model makes."""

    name: str
    arguments: dict[str, Any]
    call_id: str = ""


@dataclass(frozen=True)
class Reply:
    """One scripted answer to a chat-completions request."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning: str | None = None
    status: int = 200
    raw_body: str | None = None  # sent verbatim instead of a well-formed answer
    content_type: str = "application/json"
    chunk_size: int = 3  # characters of text per streamed chunk
    gate: asyncio.Event | None = None  # streaming pauses after the first chunk until set
    # Reported usage: 100 prompt + 10 completion tokens a call unless told otherwise (a large
    # prompt makes the agent compact); `cached_tokens` of the prompt's as the provider's cache.
    prompt_tokens: int = 100
    completion_tokens: int = 10
    cached_tokens: int = 0
    think: float = 0.0  # seconds the model takes after the first chunk before the rest (real time)
    match: Callable[[RequestBody], bool] | None = None


def text_reply(text: str, **kwargs: Any) -> Reply:
    """A plain assistant answer (streamed in small chunks when the client streams)."""
    return Reply(text=text, **kwargs)


def tool_reply(*calls: ToolCall, text: str = "", **kwargs: Any) -> Reply:
    """An assistant turn that calls tools (optionally with some text before)."""
    return Reply(text=text, tool_calls=tuple(calls), **kwargs)


def garbage_reply(body: str = "<html>502 oops</html>", **kwargs: Any) -> Reply:
    """A 200 answer whose body is not a chat completion at all."""
    return Reply(raw_body=body, content_type="text/html", **kwargs)


def error_reply(status: int = 500, message: str = "scripted failure", **kwargs: Any) -> Reply:
    """An HTTP error with an OpenAI-style error body."""
    body = json.dumps({"error": {"message": message, "type": "server_error", "code": status}})
    return Reply(status=status, raw_body=body, **kwargs)


def request_text(body: RequestBody) -> str:
    """All message contents of a request joined, handy for `match` predicates."""
    parts = [m.get("content") for m in body.get("messages", [])]
    return "\n".join(p if isinstance(p, str) else json.dumps(p) for p in parts if p)


@dataclass
class ScriptedLLM:
    """The fake server; use as an async context manager or call start()/close()."""

    model: str = "scripted-model"
    fallback: Reply | None = None  # answer when the script is empty (None = 500 error)
    # Answers, before `fallback`, what the script does not: a reply made from the request
    # (a load test's many conversations, each answered by what it asked).
    responder: Callable[[RequestBody], Reply] | None = None
    keep_requests: bool = True  # False: `requests` holds {} per request (a bench's memory)
    requests: list[RequestBody] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)  # per request, in order
    probes: list[str] = field(default_factory=list)
    _replies: list[Reply] = field(default_factory=list)
    _served: list[Reply] = field(default_factory=list)
    _runner: web.AppRunner | None = None
    _port: int = 0

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL (ends in /v1)."""
        return f"http://127.0.0.1:{self._port}/v1"

    def script(self, *replies: Reply) -> None:
        """Append replies to the queue."""
        self._replies.extend(replies)

    @property
    def pending(self) -> int:
        """How many scripted replies are still unused."""
        return len(self._replies)

    async def start(self) -> ScriptedLLM:
        """Bind a random loopback port and start serving."""
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("POST", "/{prefix:.*}chat/completions", self._completions)
        app.router.add_route("*", "/{tail:.*}", self._not_found)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self._port = sock.getsockname()[1]
        await web.SockSite(self._runner, sock).start()
        return self

    async def close(self) -> None:
        """Stop serving; releases every gate so no handler hangs."""
        for reply in [*self._replies, *self._served]:
            if reply.gate is not None:
                reply.gate.set()
        if self._runner is not None:
            await self._runner.cleanup()

    async def __aenter__(self) -> ScriptedLLM:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def wait_for_requests(self, count: int, timeout: float = WAIT) -> list[RequestBody]:
        """Wait until at least `count` chat requests arrived; return them all."""
        assert self._runner is not None, "server not started"
        await CHANGES.until(lambda: len(self.requests) >= count, timeout)
        return list(self.requests)

    def _take(self, body: RequestBody) -> Reply | None:
        for index, reply in enumerate(self._replies):
            if reply.match is not None and reply.match(body):
                return self._replies.pop(index)
        for index, reply in enumerate(self._replies):
            if reply.match is None:
                return self._replies.pop(index)
        if self.responder is not None:
            return self.responder(body)
        return self.fallback

    async def _not_found(self, request: web.Request) -> web.Response:
        self.probes.append(f"{request.method} {request.path}")
        return web.json_response({"error": {"message": "not found"}}, status=404)

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        reply = self._take(body)
        if reply is not None:
            self._served.append(reply)
        self.requests.append(body if self.keep_requests else {})
        self.authorizations.append(request.headers.get("Authorization"))
        CHANGES.notify()
        if reply is None:
            reply = error_reply(500, "the scripted LLM has no reply left")
        if reply.raw_body is not None or reply.status != 200:
            return web.Response(
                status=reply.status, text=reply.raw_body or "", content_type=reply.content_type
            )
        if body.get("stream"):
            return await _stream(request, reply, self.model)
        return web.json_response(_completion(reply, self.model))


_ids = itertools.count(1)


def _tool_call_json(call: ToolCall, index: int) -> dict[str, Any]:
    return {
        "index": index,
        "id": call.call_id or f"call_{next(_ids)}",
        "type": "function",
        "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
    }


def _usage(reply: Reply) -> dict[str, Any]:
    total = reply.prompt_tokens + reply.completion_tokens
    usage: dict[str, Any] = {"prompt_tokens": reply.prompt_tokens,
                             "completion_tokens": reply.completion_tokens, "total_tokens": total}
    if reply.cached_tokens:
        usage["prompt_tokens_details"] = {"cached_tokens": reply.cached_tokens}
    return usage


def _completion(reply: Reply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {k: v for k, v in _tool_call_json(c, i).items() if k != "index"}
            for i, c in enumerate(reply.tool_calls)
        ]
    if reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    return {
        "id": f"chatcmpl-{next(_ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish(reply)}],
        "usage": _usage(reply),
    }


def _finish(reply: Reply) -> str:
    return "tool_calls" if reply.tool_calls else "stop"


def _deltas(reply: Reply) -> list[dict[str, Any]]:
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    if reply.reasoning:
        deltas.append({"reasoning_content": reply.reasoning})
    size = max(1, reply.chunk_size)
    deltas += [{"content": reply.text[i : i + size]} for i in range(0, len(reply.text), size)]
    deltas += [{"tool_calls": [_tool_call_json(c, i)]} for i, c in enumerate(reply.tool_calls)]
    return deltas


async def _chunks(reply: Reply, model: str) -> AsyncIterator[dict[str, Any]]:
    base = {"id": f"chatcmpl-{next(_ids)}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": model}
    for number, delta in enumerate(_deltas(reply)):
        yield {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        if number == 1 and reply.gate is not None:
            await reply.gate.wait()
        if number == 0 and reply.think:
            await asyncio.sleep(reply.think)  # a bench's model thinking (tests use `gate`)
    yield {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": _finish(reply)}]}
    yield {**base, "choices": [], "usage": _usage(reply)}


async def _stream(request: web.Request, reply: Reply, model: str) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    try:
        async for chunk in _chunks(reply, model):
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
    except ConnectionResetError:
        return response  # the client went away (e.g. an aborted run); nothing to finish
    return response
