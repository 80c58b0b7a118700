"""Durable turns with real processes (issue 12 §1, §2): `hermes-chat serve` with its own child
Bridge, the fake Slack, the scripted LLM. Two conversations are in flight, one streaming (its
model call held open) and one waiting on a clarify question; then serve gets SIGTERM and is
started again, or the Bridge process is killed with SIGKILL while serve lives, or both are.
Each time the streaming run ends SUCCESS with its whole answer and every log row once, and the
clarify button posted before the restart, clicked after it, finishes that turn in the same Slack
message."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path

from tests.fakes.llm_server import ScriptedLLM
from tests.support.durable import (
    World,
    both_finish,
    bridge_process,
    check_outcome,
    kill_9,
    restarted,
    two_runs_in_flight,
    world,
)
from tests.support.replicas import Replica, replica, until


async def across_a_new_serve(w: World, stop: Callable[[World, Replica], Awaitable[None]]) -> None:
    """Two runs in flight on one serve, `stop` it, finish both on the next serve."""
    async with replica("first", w.tmp_path, w.settings) as first:
        flight = await two_runs_in_flight(w, first)
        await stop(w, first)
    async with replica("second", w.tmp_path, w.settings) as second:
        await both_finish(w, second, flight)
    await check_outcome(w, flight)


async def test_sigterm_of_serve_then_a_new_serve_loses_no_run(
    db: str, llm: ScriptedLLM, tmp_path: Path
) -> None:
    async def sigterm(_: World, first: Replica) -> None:
        first.process.send_signal(signal.SIGTERM)  # a deploy: the child Bridge goes too
        assert await asyncio.wait_for(first.process.wait(), 60) == 0, first.output()

    async with world(db, llm, tmp_path) as w:
        await across_a_new_serve(w, sigterm)


async def test_kill_9_of_the_bridge_with_serve_alive_loses_no_run(
    db: str, llm: ScriptedLLM, tmp_path: Path
) -> None:
    async with world(db, llm, tmp_path) as w:
        async with replica("serve", tmp_path, w.settings) as serve:
            flight = await two_runs_in_flight(w, serve)
            before = await bridge_process(w, serve)
            os.kill(before["pid"], signal.SIGKILL)
            await until(lambda: restarted(w, serve, before["instance"]),
                        "the supervisor restarted the Bridge", serve)
            await both_finish(w, serve, flight)
        await check_outcome(w, flight)


async def test_kill_9_of_serve_and_its_bridge_then_a_new_serve_loses_no_run(
    db: str, llm: ScriptedLLM, tmp_path: Path
) -> None:
    async with world(db, llm, tmp_path) as w:
        await across_a_new_serve(w, kill_9)

