"""Pure parts of the Bridge, without HTTP or an agent."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from bridge.compaction import compaction_data
from bridge.emitter import RunEmitter
from bridge.errors import InvalidRequest, RunExists, RunNotFound
from bridge.run_log import ENDED_BYTES
from bridge.run_registry import RunRegistry
from bridge.settings import DEFAULT_TOOLSETS, BridgeSettings
from bridge.wire import RunRequest, decode, parse_last_event_id


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_runs_are_kept_for_the_retention_after_they_end() -> None:
    clock = FakeClock()
    runs = RunRegistry(retention_seconds=90000, clock=clock)
    ended, waiting = runs.create("r1", "s"), runs.create("r2", "s")
    ended.append("done", {"final_text": ""})
    waiting.append("clarify_request", {"clarify_id": "c", "question": "?", "choices": []})
    with pytest.raises(RunExists):
        runs.create("r1", "s")

    clock.now += 89999
    assert runs.prune() == []
    clock.now += 2
    assert runs.prune() == ["r1"]
    with pytest.raises(RunNotFound):
        runs.get("r1")
    clock.now += 10**7
    assert runs.get("r2").state == "waiting_clarify"  # a pending clarify is never dropped


def test_run_log_tracks_state_and_ignores_events_after_the_end() -> None:
    log = RunRegistry(1, FakeClock()).create("r", "s")
    log.append("clarify_request", {"clarify_id": "c", "question": "q", "choices": []})
    assert (log.state, log.pending_clarify["clarify_id"]) == ("waiting_clarify", "c")
    log.clarify_resolved()
    assert (log.state, log.pending_clarify) == ("running", None)
    log.append("error", {"message": "m", "code": "aborted"})
    assert log.append("text", {"text": "late"}) is None
    assert [e.id for e in log.events] == [1, 2] and log.state == "error"


async def test_emitter_coalesces_text_and_keeps_order() -> None:
    log = RunRegistry(1, FakeClock()).create("r", "s")
    emitter = RunEmitter(log, asyncio.get_running_loop())
    for piece in ["Hel", "lo", " wor", "ld"]:
        emitter.text(piece)
    emitter.emit("status", {"category": "c", "message": "m"})
    emitter.text("!")
    async with asyncio.timeout(5):
        while len(log.events) < 3:
            await log.wait_beyond(len(log.events), 1)
    assert [(e.name, e.data) for e in log.events] == [
        ("text", {"text": "Hello world"}),
        ("status", {"category": "c", "message": "m"}),
        ("text", {"text": "!"}),
    ]


@dataclass
class ManualTimer:
    when: float
    callback: Callable[[], object]
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True


class ManualLoop:
    """The three loop methods RunEmitter uses, with time that moves only when told."""

    def __init__(self) -> None:
        self.now = 0.0
        self._timers: list[ManualTimer] = []

    def is_closed(self) -> bool:
        return False

    def call_soon_threadsafe(self, fn: Callable[..., object], *args: object) -> None:
        fn(*args)

    def call_later(self, delay: float, fn: Callable[[], object]) -> ManualTimer:
        self._timers.append(ManualTimer(self.now + delay, fn))
        return self._timers[-1]

    def advance(self, seconds: float) -> None:
        self.now += seconds
        due = [t for t in self._timers if t.when <= self.now + 1e-9]
        self._timers = [t for t in self._timers if t not in due]
        for timer in due:
            if not timer.cancelled:
                timer.callback()


def test_a_fast_stream_is_coalesced_and_no_delta_waits_over_100_ms() -> None:
    log = RunRegistry(1, FakeClock()).create("r", "s")
    loop = ManualLoop()
    emitter = RunEmitter(log, loop)  # type: ignore[arg-type]
    arrived: list[float] = []  # when each one-character token came from the model
    sent: list[float] = []  # when each character left in an event
    for tick in range(200):  # a token every 5 ms for half a second, then silence
        seen = len(log.events)
        if tick < 100:
            arrived.append(loop.now)
            emitter.text("x")
        loop.advance(0.005)
        for event in log.events[seen:]:
            sent += [loop.now] * len(event.data["text"])

    assert len(sent) == len(arrived) == 100
    assert len(log.events) <= 100 / 8  # not one event per token
    assert max(out - came for came, out in zip(arrived, sent, strict=True)) <= 0.1


def test_compaction_data_reads_the_flagged_summary() -> None:
    conversation = [{"role": "user", "content": f"m{i}"} for i in range(6)]
    messages = [
        conversation[0],
        {"role": "assistant", "content": "[CONTEXT COMPACTION — REFERENCE ONLY] x\nTHE SUMMARY",
         "_compressed_summary": True},
        {"role": "user", "content": "todo list", "_todo_snapshot_synthetic": True},
        conversation[4],
        conversation[5],
    ]
    data = compaction_data(messages, conversation)
    assert data is not None and data["compacted_until"] == 4
    assert compaction_data(conversation, conversation) is None


def test_decode_run_request() -> None:
    body = b'{"run_id": "r1", "session_id": "chat-1", "user_message": "hi", "history": []}'
    request = decode(body, RunRequest)
    assert request.history == [] and request.model is None
    with pytest.raises(InvalidRequest, match="max_iterations"):
        decode(b'{"run_id":"r","session_id":"s","user_message":"x","max_iterations":0}',
               RunRequest)
    assert parse_last_event_id(None) == 0 and parse_last_event_id(" 7 ") == 7
    with pytest.raises(InvalidRequest):
        parse_last_event_id("-1")


def test_settings_from_env() -> None:
    settings = BridgeSettings.from_env({"BRIDGE_PORT": "9999", "HERMES_MODEL": "qwen",
                                        "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1"})
    assert (settings.port, settings.model, settings.host) == (9999, "qwen", "127.0.0.1")
    assert settings.toolsets == DEFAULT_TOOLSETS and settings.openai_api_key is None
    assert BridgeSettings.from_env({"BRIDGE_TOOLSETS": "todo, web"}).toolsets == ("todo", "web")
    tuned = BridgeSettings.from_env({"BRIDGE_POOL_SIZE": "3", "CLARIFY_FALLBACK_HOURS": "48"})
    assert (tuned.pool_size, tuned.clarify_fallback_seconds) == (3, 48 * 3600)


def test_defaults_are_the_designed_ones() -> None:
    settings = BridgeSettings.from_env({})
    assert settings == BridgeSettings()
    assert (settings.host, settings.port, settings.pool_size) == ("127.0.0.1", 18731, 8)
    assert settings.heartbeat_seconds == 15
    assert settings.clarify_fallback_seconds == 24 * 3600
    assert settings.retention_seconds == 25 * 3600
    assert settings.toolsets == ("todo", "clarify", "memory") and not settings.shared_memory


async def test_emitter_replaces_nul_and_lone_surrogates_so_every_event_encodes() -> None:
    log = RunRegistry(1, FakeClock()).create("r1", "s1")
    emitter = RunEmitter(log, asyncio.get_running_loop(), secret="sk-secret-123")
    emitter.emit_now("tool_start", {"tool_call_id": "c\x00", "tool_name": "todo",
                                    "args": {"k\ud83d": ["v\x00", {"d": "sk-secret-123 \udc00"}]}})
    emitter.text("a\x00b\ud83d")  # handed to the loop, as from the agent's thread
    await asyncio.sleep(0)
    emitter.flush()
    start, text = log.events
    assert start.data == {"tool_call_id": "c\ufffd", "tool_name": "todo",
                          "args": {"k\ufffd": ["v\ufffd", {"d": "[redacted] \ufffd"}]}}
    assert text.data == {"text": "a\ufffdb\ufffd"}
    assert all(event.encode() for event in log.events)  # a lone surrogate would not encode


def test_a_checkpoint_repeats_the_id_before_it_and_a_replay_from_that_id_includes_it() -> None:
    log = RunRegistry(1, FakeClock()).create("r", "s", first_id=7)
    log.append("text", {"text": "a"})
    log.append("checkpoint", {"messages": [], "clarify": None})
    log.append("clarify_request", {"clarify_id": "c", "question": "q", "choices": []})
    assert [(e.id, e.name) for e in log.events] == [
        (7, "text"), (7, "checkpoint"), (8, "clarify_request")]
    assert [e.name for e in log.events_after(6)] == ["text", "checkpoint", "clarify_request"]
    assert [e.name for e in log.events_after(7)] == ["checkpoint", "clarify_request"]
    assert log.events_after(8) == [] and log.last_event_id == 8


def test_a_run_keeps_at_most_its_buffer_of_events_and_an_ended_one_less() -> None:
    log = RunRegistry(1, FakeClock(), buffer_bytes=200_000).create("r", "s")
    for _ in range(5000):
        log.append("text", {"text": "x" * 100})
    assert log.kept_bytes <= 200_000 and log.events[-1].id == 5000
    assert sum(e.size for e in log.events) == log.kept_bytes
    oldest = log.events[0].id
    assert oldest > 1 and log.events_after(0)[0].id == oldest  # older ones: the runtime's store
    log.append("done", {"final_text": "end"})
    assert log.kept_bytes <= ENDED_BYTES and log.events[-1].name == "done"
