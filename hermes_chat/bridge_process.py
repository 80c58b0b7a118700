"""The Bridge as a child process of `serve`, when HERMES_BRIDGE_URL names no external one.

The agent runs in its own process (hermes-agent is synchronous and heavy): `python -m bridge`,
with an allow-listed environment (hermes_chat/bridge_environment.py), a token generated for it,
an instance id of its own (its `/health` must name it before it counts as started) and the
request to end when `serve` dies. It is supervised: when it exits on its own (a crash, the OOM
killer, a kill -9) it is started again after a backoff (0.5 s doubling to 30 s; back to 0.5 s
once a child stayed up a minute), with a log line each time; `/api/health` and `/metrics` show
its state and restarts. It is stopped with SIGTERM (SIGKILL after 10 s) when `serve` stops.
A Bridge a previous `serve` left behind is replaced first (hermes_chat/bridge_leftover.py).
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import signal
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, replace
from typing import Literal

import httpx
import psutil

from core.agent.catalogue import Catalogue
from core.config import Settings
from core.edge.backoff import Backoff
from core.edge.urls import redacted_url
from core.errors import BridgeUnavailable
from hermes_chat.bridge_environment import child_environment, child_key_envs
from hermes_chat.bridge_leftover import ChildRecords, clear_the_port

log = logging.getLogger("hermes_chat.bridge")
READY_DEADLINE = 60.0
STOP_GRACE = 10.0
RESTART_BACKOFF = Backoff(base=0.5, cap=30.0)
STABLE_AFTER = 60.0  # seconds up after which a crash starts the backoff afresh
ChildState = Literal["starting", "running", "restarting", "stopped"]


def with_child_token(settings: Settings) -> Settings:
    """`serve`'s settings with a BRIDGE_TOKEN for its child when none is set (one per `serve`
    process, so a restarted child takes the same), known before logging starts so that it
    is redacted like every other secret."""
    if settings.hermes_bridge_url or settings.bridge_token:
        return settings
    return replace(settings, bridge_token=secrets.token_urlsafe(32))


@dataclass(frozen=True, slots=True)
class BridgeEndpoint:
    """Where the runtime finds the Bridge, its token, and the supervisor of a child one."""

    url: str
    token: str | None
    child: BridgeSupervisor | None = None


@asynccontextmanager
async def bridge_child(settings: Settings, catalogue: Catalogue,
                       environ: Mapping[str, str] | None = None) -> AsyncIterator[BridgeEndpoint]:
    """The external Bridge as it is, or a supervised child once its `/health` names it."""
    if settings.hermes_bridge_url:
        log.info("bridge: using the external one at %s", redacted_url(settings.hermes_bridge_url))
        yield BridgeEndpoint(settings.hermes_bridge_url, settings.bridge_token)
        return
    settings = with_child_token(settings)
    assert settings.bridge_token is not None
    keys = child_key_envs(settings, catalogue)
    env = child_environment(settings, os.environ if environ is None else environ,
                            settings.bridge_token, keys)
    supervisor = BridgeSupervisor(settings.bridge_url, env, ChildRecords(settings.hermes_home))
    await supervisor.start()
    try:
        yield BridgeEndpoint(settings.bridge_url, settings.bridge_token, supervisor)
    finally:
        await supervisor.stop()


class BridgeSupervisor:
    """Starts the child, starts it again whenever it exits on its own, stops it at the end."""

    def __init__(self, url: str, env: Mapping[str, str], records: ChildRecords, *,
                 backoff: Backoff = RESTART_BACKOFF, stable_after: float = STABLE_AFTER,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.url = url
        self._env = env  # read at each start
        self._records = records
        self._backoff = backoff
        self._stable_after = stable_after
        self._clock = clock
        self._sleep = sleep
        self.process: asyncio.subprocess.Process | None = None
        self.instance: str | None = None
        self.state: ChildState = "starting"
        self.restarts = 0
        self.last_exit: str | None = None
        self._started_at = 0.0
        self._watcher: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Replace a leftover Bridge, start the child and watch it (BridgeUnavailable if it
        never becomes ready; InvalidInput if something else holds its address)."""
        await clear_the_port(self.url, self._records)
        await self._launch()
        log.info("bridge: started as process %s on %s", self.pid, self.url)
        self._watcher = asyncio.create_task(self._watch(), name="bridge-supervisor")

    async def stop(self) -> None:
        """Stop watching, then stop the child."""
        self.state = "stopped"
        if self._watcher is not None:
            self._watcher.cancel()
            with suppress(asyncio.CancelledError):
                await self._watcher
        if self.process is not None:
            await _stop(self.process)
        self._records.clear()
        log.info("bridge: stopped")

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def health(self) -> dict[str, object]:
        """What `/api/health` shows of the child."""
        return {"state": self.state, "pid": self.pid, "instance": self.instance,
                "restarts": self.restarts, "lastExit": self.last_exit}

    async def _launch(self) -> None:
        instance = uuid.uuid4().hex
        self.process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bridge", "--instance", instance,
            "--parent-pid", str(os.getpid()), env=self._env,
            # Its own session: a Ctrl-C (or a SIGTERM to serve's process group) reaches serve
            # alone, which closes the runtime first and then stops the child; the child ends
            # with serve anyway (`--parent-pid`), so it is never left running unwatched.
            start_new_session=True,
        )
        try:
            await wait_ready(self.url, self.process, instance)
        except BaseException:
            await _stop(self.process)
            raise
        self.instance, self.state, self._started_at = instance, "running", self._clock()
        try:
            self._records.write(self.process.pid, instance, self.url)
        except (OSError, psutil.Error) as error:  # only a later serve's recognition needs it
            log.warning("bridge: could not record the child process: %s", error)

    async def _watch(self) -> None:
        failures = 0
        while True:
            assert self.process is not None
            code = await self.process.wait()
            # Only a child that started and stayed up a while starts the backoff afresh.
            stayed_up = self.state == "running" and (
                self._clock() - self._started_at >= self._stable_after)
            failures = 1 if stayed_up else failures + 1
            self.state, self.restarts = "restarting", self.restarts + 1
            self.last_exit = describe_exit(code)
            delay = self._backoff.delay(failures)
            log.warning("bridge: process %s %s; starting it again in %.1f s (restart %d)",
                        self.process.pid, self.last_exit, delay, self.restarts)
            await self._sleep(delay)
            try:
                await self._launch()
            except BridgeUnavailable as error:  # it exited again at once: wait longer, retry
                log.error("bridge: restart %d failed: %s", self.restarts, error.message)
                continue
            except Exception:  # never stop supervising: the next round tries again
                log.exception("bridge: restart %d failed", self.restarts)
                continue
            log.info("bridge: started again as process %s (instance %s)", self.pid, self.instance)


def describe_exit(code: int) -> str:
    """`exited with code 1` / `was killed by SIGKILL`."""
    if code < 0:
        with suppress(ValueError):
            return f"was killed by {signal.Signals(-code).name}"
    return f"exited with code {code}"


async def wait_ready(url: str, child: asyncio.subprocess.Process,
                     instance: str | None = None) -> None:
    """Until `url/health` answers, and names `instance` when one is given: a Bridge that
    names another is not this child (BridgeUnavailable), nor is one that exits first."""
    async with httpx.AsyncClient(timeout=1.0) as client:
        try:
            async with asyncio.timeout(READY_DEADLINE):
                while not await _answers(client, url, child, instance):
                    await asyncio.sleep(0.2)  # polling a starting process, with a deadline
        except TimeoutError:
            raise BridgeUnavailable(
                f"the Bridge process {child.pid} did not answer at {url} within "
                f"{READY_DEADLINE:g} s") from None


async def _answers(client: httpx.AsyncClient, url: str, child: asyncio.subprocess.Process,
                   instance: str | None) -> bool:
    if child.returncode is not None:
        raise BridgeUnavailable(
            f"the Bridge process {describe_exit(child.returncode)} before it answered")
    try:
        response = await client.get(f"{url}/health")
    except httpx.TransportError:
        return False
    if response.status_code != 200:
        return False
    named = _named_instance(response)
    if instance is not None and named != instance:
        raise BridgeUnavailable(f"another Bridge (instance {named}) answers at {url}, not the "
                                f"process {child.pid} just started")
    return True


def _named_instance(response: httpx.Response) -> str | None:
    try:
        body = response.json()
    except ValueError:
        return None
    return body.get("instance") if isinstance(body, dict) else None


async def _stop(child: asyncio.subprocess.Process) -> None:
    if child.returncode is not None:
        return
    child.send_signal(signal.SIGTERM)
    try:
        await asyncio.wait_for(child.wait(), STOP_GRACE)
    except TimeoutError:
        child.kill()
        await child.wait()
