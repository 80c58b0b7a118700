"""Tool approvals: a command hermes-agent flags as dangerous waits for a decision through the
Bridge, never runs unasked (real agent loop, `terminal` enabled, scripted LLM)."""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bridge.settings import BridgeSettings
from tests.bridge.harness import (
    RunningBridge,
    SseReader,
    names,
    run_body,
    run_to_end,
    running_bridge,
)
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply

PATTERN = "delete in root path"  # hermes-agent's pattern key of `rm -rf /tmp/...`


@pytest.fixture
async def terminal_bridge(bridge_settings: BridgeSettings) -> AsyncIterator[RunningBridge]:
    settings = replace(bridge_settings, toolsets=("terminal", "clarify"))
    async with running_bridge(settings) as running:
        yield running


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    target = tmp_path / "victim"
    target.mkdir()
    (target / "file.txt").write_text("keep me")
    return target


def rm(victim: Path) -> ToolCall:
    return ToolCall("terminal", {"command": f"rm -rf {victim}"})


def tool_results(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


async def ask(bridge: RunningBridge, body: dict[str, Any], reader: SseReader) -> dict[str, Any]:
    return (await reader.until_event("approval_request"))[-1].data


async def test_without_an_answer_nothing_runs_and_deny_tells_the_agent(
    terminal_bridge: RunningBridge, llm: ScriptedLLM, victim: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    llm.script(tool_reply(rm(victim)), text_reply("I will not delete it."))
    body = run_body(llm, "clean up")
    caplog.set_level(logging.WARNING)
    async with terminal_bridge.client.stream("POST", "/run", json=body) as response:
        reader = SseReader(response)
        before = await reader.until_event("approval_request")
        request = before[-1].data
        assert request["tool"] == "terminal"
        assert request["command"] == f"rm -rf {victim}"
        assert request["pattern_key"] == PATTERN and request["reason"]
        assert request["choices"] == ["once", "session", "always", "deny"]
        point = [e for e in before if e.name == "checkpoint"][-1].data
        assert point["approval"] == {"approval_id": request["approval_id"]}
        assert not any(m.get("tool_calls") for m in point["messages"])  # before the ask
        state = (await terminal_bridge.client.get(f"/runs/{body['run_id']}")).json()
        assert state["state"] == "waiting_approval" and state["pending_approval"] == request
        assert len(llm.requests) == 1 and (victim / "file.txt").exists()

        answer = await terminal_bridge.client.post(
            f"/runs/{body['run_id']}/approval",
            json={"approval_id": request["approval_id"], "decision": "deny"})
        assert answer.status_code == 200, answer.text
        after = await reader.until()
    assert names(after)[-1] == "done"
    assert "BLOCKED" in tool_results(llm.requests[1])[-1]
    assert (victim / "file.txt").exists()
    again = await terminal_bridge.client.post(
        f"/runs/{body['run_id']}/approval",
        json={"approval_id": request["approval_id"], "decision": "once"})
    assert again.status_code == 409 and again.json()["code"] == "approval_answered"
    assert "AUTO-APPROVED" not in caplog.text


async def test_allow_once_runs_once_and_the_next_request_asks_again(
    terminal_bridge: RunningBridge, llm: ScriptedLLM, victim: Path
) -> None:
    llm.script(tool_reply(rm(victim)), tool_reply(rm(victim)), text_reply("done"))
    body = run_body(llm, "clean up twice")
    url = f"/runs/{body['run_id']}/approval"
    async with terminal_bridge.client.stream("POST", "/run", json=body) as response:
        reader = SseReader(response)
        first = await ask(terminal_bridge, body, reader)
        await terminal_bridge.client.post(url, json={"approval_id": first["approval_id"],
                                                     "decision": "once"})
        second = await ask(terminal_bridge, body, reader)
        assert second["approval_id"] != first["approval_id"]
        assert not victim.exists()  # the first one ran
        victim.mkdir()
        await terminal_bridge.client.post(url, json={"approval_id": second["approval_id"],
                                                     "decision": "deny"})
        assert names(await reader.until())[-1] == "done"
    assert victim.exists()


async def test_allow_in_this_run_does_not_ask_again_within_it(
    terminal_bridge: RunningBridge, llm: ScriptedLLM, victim: Path
) -> None:
    llm.script(tool_reply(rm(victim)), tool_reply(rm(victim)), text_reply("done"))
    body = run_body(llm, "clean up twice")
    async with terminal_bridge.client.stream("POST", "/run", json=body) as response:
        reader = SseReader(response)
        first = await ask(terminal_bridge, body, reader)
        await terminal_bridge.client.post(f"/runs/{body['run_id']}/approval", json={
            "approval_id": first["approval_id"], "decision": "session"})
        after = await reader.until()
    assert "approval_request" not in names(after) and names(after)[-1] == "done"


async def test_remembered_patterns_run_without_asking(
    terminal_bridge: RunningBridge, llm: ScriptedLLM, victim: Path
) -> None:
    llm.script(tool_reply(rm(victim)), text_reply("gone"))
    events = await run_to_end(terminal_bridge,
                              run_body(llm, "clean up", approved_patterns=[PATTERN]))
    assert "approval_request" not in names(events) and names(events)[-1] == "done"
    assert not victim.exists()


async def test_a_resumed_turn_applies_the_decision_given_meanwhile(
    terminal_bridge: RunningBridge, llm: ScriptedLLM, victim: Path
) -> None:
    llm.script(tool_reply(rm(victim)), text_reply("gone"))
    command = f"rm -rf {victim}"
    resume = {"first_event_id": 7, "messages": [{"role": "user", "content": "clean up"}],
              "approval": {"pattern_key": PATTERN, "command": command, "decision": "once"}}
    events = await run_to_end(terminal_bridge, run_body(llm, "clean up", resume=resume))
    assert events[0].id == 7 and events[0].data["category"] == "resumed"
    assert "approval_request" not in names(events) and names(events)[-1] == "done"
    assert not victim.exists()


async def test_a_stored_deny_refuses_and_another_command_is_asked(
    terminal_bridge: RunningBridge, llm: ScriptedLLM, victim: Path
) -> None:
    llm.script(tool_reply(rm(victim)), text_reply("kept"))
    resume = {"first_event_id": 3, "messages": [{"role": "user", "content": "clean up"}],
              "approval": {"pattern_key": PATTERN, "command": f"rm -rf {victim}",
                           "decision": "deny"}}
    events = await run_to_end(terminal_bridge, run_body(llm, "clean up", resume=resume))
    assert names(events)[-1] == "done" and victim.exists()
    assert "BLOCKED" in tool_results(llm.requests[1])[-1]


async def test_bad_answers_get_stable_codes(
    terminal_bridge: RunningBridge, llm: ScriptedLLM, victim: Path
) -> None:
    llm.script(tool_reply(rm(victim)), text_reply("ok"))
    body = run_body(llm, "clean up")
    url = f"/runs/{body['run_id']}/approval"
    async with terminal_bridge.client.stream("POST", "/run", json=body) as response:
        reader = SseReader(response)
        request = await ask(terminal_bridge, body, reader)
        bad = await terminal_bridge.client.post(url, json={"approval_id": request["approval_id"],
                                                           "decision": "maybe"})
        assert bad.status_code == 400 and bad.json()["code"] == "invalid_request"
        other_run = await terminal_bridge.client.post(
            "/runs/run-other/approval", json={"approval_id": request["approval_id"],
                                              "decision": "once"})
        assert other_run.status_code == 404 and other_run.json()["code"] == "approval_not_found"
        unknown = await terminal_bridge.client.post(url, json={"approval_id": "apr-nope",
                                                               "decision": "once"})
        assert unknown.status_code == 404
        as_clarify = await terminal_bridge.client.post(
            f"/clarify/{request['approval_id']}/answer", json={"answer": "once"})
        assert as_clarify.status_code == 404 and as_clarify.json()["code"] == "clarify_not_found"
        assert victim.exists()
        await terminal_bridge.client.post(f"/runs/{body['run_id']}/abort")
        assert names(await reader.until())[-1] == "error"
    assert victim.exists()


def test_no_approval_path_fails_closed(terminal_bridge: RunningBridge, victim: Path) -> None:
    """Outside a turn's gate (no notify callback registered) the command is refused."""
    from tools.approval import check_all_command_guards

    verdict = check_all_command_guards(f"rm -rf {victim}", "local")
    assert verdict["approved"] is False
    assert victim.exists()


def test_the_bridge_prepares_hermes_agent_to_ask(
    bridge_settings: BridgeSettings, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """HERMES_EXEC_ASK on (no approval path: refused), YOLO mode off, approvals.mode manual."""
    from bridge.hermes_home import prepare_hermes_home

    monkeypatch.setenv("HERMES_YOLO_MODE", "1")
    monkeypatch.delenv("HERMES_EXEC_ASK", raising=False)
    home = prepare_hermes_home(bridge_settings)
    assert os.environ["HERMES_EXEC_ASK"] == "1" and "HERMES_YOLO_MODE" not in os.environ
    assert "HERMES_YOLO_MODE is ignored" in caplog.text
    assert "mode: manual" in (home / "config.yaml").read_text(encoding="utf-8")
