"""The child Bridge of `serve`, supervised (issue 12 §5), with real processes: a crashed child
is started again (backoff, a log line, `/api/health` and `/metrics` show it); a kill -9 of
`serve` takes its child along; an old child still holding the port is recognised and replaced;
a Bridge this `serve` did not start is never taken for its child."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import psutil
import pytest

from core.config import Settings
from core.errors import BridgeUnavailable
from hermes_chat.bridge_environment import child_environment
from hermes_chat.bridge_leftover import ChildRecords
from hermes_chat.bridge_process import BridgeSupervisor, wait_ready
from tests.conftest import TEST_CONFIG_YAML
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.faults.bridge_child import BridgeChild
from tests.support.processes import code_path, free_port
from tests.support.replicas import Replica, replica, resolved, until
from tests.fakes.changes import WAIT


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "hermes"
    home.mkdir(exist_ok=True)
    (home / "config.yaml").write_text(TEST_CONFIG_YAML, encoding="utf-8")
    return home


def _settings(tmp_path: Path, port: int, **more: str) -> dict[str, str]:
    _home(tmp_path)
    return {"BRIDGE_PORT": str(port), "SKILLS_DIR": str(tmp_path / "skills"), **more}


def _log(serve: Replica) -> str:
    return serve.log.read_text(encoding="utf-8", errors="replace")


async def _child(serve: Replica) -> dict[str, object]:
    async with httpx.AsyncClient(timeout=5.0) as client:
        return (await client.get(f"{serve.url}/api/health")).json()["bridgeProcess"]


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


async def test_a_crashed_child_is_started_again_and_health_and_metrics_show_it(
    tmp_path: Path, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("answered by the new child"))
    settings = _settings(tmp_path, free_port(), OPENAI_BASE_URL=llm.base_url,
                         HERMES_MODEL=llm.model)
    async with replica("serve", tmp_path, settings) as serve, \
            httpx.AsyncClient(base_url=serve.url, timeout=WAIT) as http:
        first = await _child(serve)
        assert (first["state"], first["restarts"]) == ("running", 0)
        os.kill(int(first["pid"]), signal.SIGKILL)  # a crash, the OOM killer...

        async def restarted() -> dict[str, object] | None:
            child = await _child(serve)
            return child if child["restarts"] == 1 and child["state"] == "running" else None

        again: dict[str, object] = await until(restarted, "the child started again", serve)
        assert again["pid"] != first["pid"] and again["instance"] != first["instance"]
        assert again["lastExit"] == "was killed by SIGKILL"
        metrics = (await http.get("/metrics")).text
        assert "hermes_bridge_restarts_total 1.0" in metrics and "hermes_bridge_up 1.0" in metrics
        assert (f"bridge: process {first['pid']} was killed by SIGKILL; starting it again in "
                "0.5 s (restart 1)") in _log(serve)
        assert f"bridge: started again as process {again['pid']}" in _log(serve)

        # The new child has the same token as the old one: runs go on through it.
        session = (await http.post("/api/chat/sessions", json={})).json()["id"]
        run = (await http.post(f"/api/chat/sessions/{session}/runs",
                               json={"message": "hello"})).json()["runId"]

        async def succeeded() -> bool:
            state = (await http.get(f"/api/chat/runs/{run}/state")).json()
            assert state["status"] in ("QUEUED", "RUNNING", "SUCCESS"), state
            return state["status"] == "SUCCESS"

        await until(succeeded, "a run through the restarted child", serve)


async def test_a_kill_9_of_serve_takes_its_child_along(tmp_path: Path) -> None:
    async with replica("serve", tmp_path, _settings(tmp_path, free_port())) as serve:
        pid = int(str((await _child(serve))["pid"]))
        serve.process.kill()  # SIGKILL: serve cleans nothing up
        await serve.process.wait()
        await until(lambda: resolved(_gone(pid)), "the orphaned child gone", serve)


async def test_a_child_left_by_a_dead_serve_is_recognised_and_replaced(tmp_path: Path) -> None:
    """The old child is stopped (SIGSTOP) before its serve is killed, so it can neither act on
    its parent's death nor answer: it still holds the port when the next serve starts."""
    settings = _settings(tmp_path, free_port())
    async with replica("first", tmp_path, settings) as first:
        old = await _child(first)
        os.kill(int(str(old["pid"])), signal.SIGSTOP)
        first.process.kill()
        await first.process.wait()
    old_pid = int(str(old["pid"]))
    assert psutil.Process(old_pid).status() == psutil.STATUS_STOPPED
    try:
        async with replica("second", tmp_path, settings) as second:
            new = await _child(second)
            assert new["instance"] != old["instance"] and new["state"] == "running"
            assert _gone(old_pid)
            assert (f"bridge: process {old_pid} (instance {old['instance']}, at "
                    f"http://127.0.0.1:{settings['BRIDGE_PORT']}) was left running by a serve "
                    "that is gone; replacing it (it does not answer /health)") in _log(second)
    finally:
        if not _gone(old_pid):  # the test failed: end what it started
            os.kill(old_pid, signal.SIGKILL)


@pytest.fixture
def foreign_bridge(bridge_child: BridgeChild) -> BridgeChild:
    """A Bridge started by hand (its own HERMES_HOME), not by a serve."""
    return bridge_child


async def test_a_bridge_this_serve_did_not_start_is_never_taken_for_its_child(
    tmp_path: Path, foreign_bridge: BridgeChild
) -> None:
    env = {**os.environ, "PYTHONPATH": code_path(), "BRIDGE_PORT": str(foreign_bridge.port),
           "HERMES_HOME": str(_home(tmp_path)), "ADMIN_PORT": str(free_port())}
    env.pop("HERMES_BRIDGE_URL", None)
    serve = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_chat", "serve", cwd=tmp_path, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    output, _ = await asyncio.wait_for(serve.communicate(), WAIT)
    assert serve.returncode == 1, output.decode()
    assert (f"the Bridge's address http://127.0.0.1:{foreign_bridge.port} is in use by another "
            f"Hermes Bridge (instance {foreign_bridge.instance}), which this service did not "
            "start") in output.decode()
    async with httpx.AsyncClient(timeout=5.0) as client:  # left alone
        health = (await client.get(f"{foreign_bridge.url}/health")).json()
    assert health["instance"] == foreign_bridge.instance


async def test_readiness_needs_the_child_s_own_instance(foreign_bridge: BridgeChild) -> None:
    """Even if another Bridge grabbed the port after the check, it is not the new child."""
    stand_in = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "import time; time.sleep(60)")
    try:
        with pytest.raises(BridgeUnavailable) as refused:
            await wait_ready(foreign_bridge.url, stand_in, "the-instance-serve-gave-its-child")
        assert f"another Bridge (instance {foreign_bridge.instance}) answers" in refused.value.message
    finally:
        stand_in.kill()
        await stand_in.wait()


class Sleeps:
    """The supervisor's backoff pauses, recorded (and not slept)."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
        await asyncio.sleep(0)


async def _eventually(check: Callable[[], bool], what: str) -> None:
    async with asyncio.timeout(WAIT):
        while not check():
            await asyncio.sleep(0.05)  # polling real processes, with a deadline
    assert check(), what


async def test_restarts_back_off_while_the_child_keeps_failing(tmp_path: Path) -> None:
    port = free_port()
    settings = Settings(bridge_port=port, hermes_home=str(_home(tmp_path)))
    env = {**child_environment(settings, os.environ, "tok-3f9a", ()), "PYTHONPATH": code_path()}
    sleeps = Sleeps()
    # Every reading of the clock is 100 s after the last: the first child counts as one that
    # stayed up, and the failing ones must not reset the backoff however long they take.
    ticks = iter(range(0, 10**6, 100))
    supervisor = BridgeSupervisor(settings.bridge_url, env, ChildRecords(settings.hermes_home),
                                  sleep=sleeps, clock=lambda: float(next(ticks)))
    await supervisor.start()
    try:
        env["BRIDGE_POOL_SIZE"] = "many"  # from now on every new child exits at once (code 2)
        os.kill(int(supervisor.pid or 0), signal.SIGKILL)
        await _eventually(lambda: len(sleeps.delays) >= 4, "four restarts tried")
        assert sleeps.delays[:4] == [0.5, 1.0, 2.0, 4.0]
        assert supervisor.health()["state"] == "restarting"
        assert supervisor.last_exit == "exited with code 2"
        env["BRIDGE_POOL_SIZE"] = "8"  # fixed: the next try stays up
        await _eventually(lambda: supervisor.state == "running", "running again")
        assert (await _fetch_instance(supervisor.url)) == supervisor.instance
    finally:
        await supervisor.stop()
    assert supervisor.process is not None and supervisor.process.returncode is not None


async def _fetch_instance(url: str) -> str:
    async with httpx.AsyncClient(timeout=5.0) as client:
        return str((await client.get(f"{url}/health")).json()["instance"])


async def test_ctrl_c_reaches_serve_alone_which_then_stops_its_child(tmp_path: Path) -> None:
    """SIGINT to the whole foreground process group, as a terminal's Ctrl-C sends it: the
    child, in a session of its own, is stopped by serve after the runtime has closed, not
    killed by the same signal and then seen as a crash to restart."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": code_path(), "BRIDGE_PORT": str(port),
           "HERMES_HOME": str(_home(tmp_path)), "ADMIN_PORT": str(free_port())}
    env.pop("HERMES_BRIDGE_URL", None)
    log = tmp_path / "serve.log"
    with log.open("wb") as sink:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "hermes_chat", "serve", cwd=tmp_path, env=env, stdout=sink,
            stderr=sink, start_new_session=True)  # a group of its own, like a terminal's job
    serve = Replica("serve", process, f"http://127.0.0.1:{env['ADMIN_PORT']}", log)
    try:
        await until(lambda: _answers(serve), "serve healthy", serve)
        child = int(str((await _child(serve))["pid"]))
        assert os.getsid(child) == child != os.getsid(process.pid)  # out of the terminal's reach
        os.killpg(process.pid, signal.SIGINT)
        assert await asyncio.wait_for(process.wait(), WAIT) == 0, _log(serve)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    output = _log(serve)
    assert "starting it again" not in output and "bridge: stopped" in output
    assert output.index("runtime: recovered") < output.index("bridge: stopped")
    assert _gone(child)


async def _answers(serve: Replica) -> bool:
    try:
        return (await _child(serve))["state"] == "running"
    except (httpx.HTTPError, KeyError):
        return False
