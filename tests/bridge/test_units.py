"""Pure parts of the Bridge, without HTTP or an agent."""

from __future__ import annotations

import asyncio

import pytest

from bridge.compaction import compaction_data
from bridge.emitter import RunEmitter
from bridge.errors import InvalidRequest, RunExists, RunNotFound
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
