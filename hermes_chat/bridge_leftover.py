"""A Bridge that a previous `serve` left running, told apart from everything else on its port.

`serve` records its child in `$HERMES_HOME/bridge-children/<serve pid>.json` (its own pid and
start time, the child's, the instance id the child names in `GET /health`, and its address).
Before it starts a new child, it looks at those records and at the port:

- the recorded child is still alive (same pid *and* start time: no reused pid is mistaken for
  it) and the `serve` that started it is gone: it is a leftover of ours. It is stopped (SIGTERM,
  SIGCONT for a stopped one, SIGKILL after a grace period) before the new child starts. Replaced,
  not adopted: a new `serve` is often a deploy, with new code, settings, keys or environment, and
  a Bridge of the old one would keep them; the turns it held are the durable turns' to continue.
- the recorded `serve` is still alive: its Bridge is in use (refused if it holds our address,
  left alone if it serves elsewhere).
- anything else answers on the port (another Bridge, whatever its instance, or any server):
  refused with a clear reason; it is never taken for the new child (which must answer
  `/health` with the instance `serve` gave it).

On Linux the child also asks the kernel to stop it when `serve` dies (bridge/parent_watch.py),
so a leftover is one that is still shutting down, stopped (SIGSTOP), or on another system.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx
import psutil

from core.errors import InvalidInput

log = logging.getLogger("hermes_chat.bridge")
RECORDS_FOLDER = "bridge-children"
PROBE_TIMEOUT = 2.0
GRACE_SECONDS = 10.0  # a Bridge ends its streams within 5 s of SIGTERM


@dataclass(frozen=True, slots=True)
class ChildRecord:
    """Which process is the child Bridge of which `serve` process, and where it serves."""

    serve_pid: int
    serve_started: float
    pid: int
    started: float
    instance: str
    url: str


class ChildRecords:
    """The records of one HERMES_HOME: one file per `serve` process, written by that one."""

    def __init__(self, hermes_home: str) -> None:
        self.folder = Path(hermes_home) / RECORDS_FOLDER
        self.path = self.folder / f"{os.getpid()}.json"  # this process's own

    def read_all(self) -> list[tuple[Path, ChildRecord]]:
        found = []
        for path in sorted(self.folder.glob("*.json")):
            try:
                found.append((path, ChildRecord(**json.loads(path.read_text(encoding="utf-8")))))
            except FileNotFoundError:
                continue  # its serve just stopped
            except (ValueError, TypeError) as error:  # unreadable: it recognises nothing
                log.warning("bridge: ignoring %s (%s)", path, error)
        return found

    def write(self, pid: int, instance: str, url: str) -> None:
        me = psutil.Process()
        record = ChildRecord(me.pid, me.create_time(), pid, psutil.Process(pid).create_time(),
                             instance, url)
        self.folder.mkdir(parents=True, exist_ok=True)
        staging = self.path.with_suffix(".tmp")
        staging.write_text(json.dumps(asdict(record)), encoding="utf-8")
        os.replace(staging, self.path)  # never half a record

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)


async def clear_the_port(url: str, records: ChildRecords) -> None:
    """Stop every leftover child of a `serve` that is gone (whatever port it holds: no agent is
    left running unwatched); then refuse (InvalidInput) if anything still answers at `url`,
    saying what it is."""
    for path, record in records.read_all():
        if await _end_leftover(record, url):
            path.unlink(missing_ok=True)
    what = await _occupant(url)
    if what is not None:
        raise InvalidInput(
            f"the Bridge's address {url} is in use by {what}, which this service did not start: "
            "stop it, point HERMES_BRIDGE_URL at it, or choose another BRIDGE_PORT")


async def _end_leftover(record: ChildRecord, url: str) -> bool:
    """End the recorded child if its serve is gone; True once the record says nothing alive."""
    serve_alive = _same_process(record.serve_pid, record.serve_started) is not None
    child = _same_process(record.pid, record.started)
    if child is None:
        return not serve_alive  # a live serve's record is its own to update (a restart)
    if serve_alive:
        if record.url == url:
            raise InvalidInput(f"the Bridge at {record.url} (process {record.pid}) belongs to "
                               f"the running serve process {record.serve_pid}; stop that one "
                               "first, or choose another BRIDGE_PORT")
        return False  # another serve's Bridge, elsewhere: not ours to touch
    named = await _instance_at(record.url)
    log.warning("bridge: process %s (instance %s, at %s) was left running by a serve that is "
                "gone; replacing it%s", record.pid, record.instance, record.url,
                "" if named == record.instance else " (it does not answer /health)")
    await asyncio.to_thread(_end_process, child)
    log.info("bridge: the leftover process %s has ended", record.pid)
    return True


def _same_process(pid: int, started: float) -> psutil.Process | None:
    """The live process `pid` if it is the one that started at `started` (not a reused pid)."""
    try:
        process = psutil.Process(pid)
        alive = process.status() != psutil.STATUS_ZOMBIE
        return process if alive and abs(process.create_time() - started) < 0.01 else None
    except psutil.Error:
        return None


def _end_process(process: psutil.Process) -> None:
    try:
        process.send_signal(signal.SIGTERM)
        process.send_signal(signal.SIGCONT)  # a stopped process handles SIGTERM only once woken
        if not _ended_within(process, GRACE_SECONDS):
            log.warning("bridge: process %s ignored SIGTERM for %.0f s; killing it",
                        process.pid, GRACE_SECONDS)
            process.kill()
            _ended_within(process, GRACE_SECONDS)
    except psutil.NoSuchProcess:
        return


def _ended_within(process: psutil.Process, seconds: float) -> bool:
    # Not our child, so whoever reaps it may not: a zombie has ended (and let go of the port).
    try:
        process.wait(timeout=seconds)
    except psutil.TimeoutExpired:
        return process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        pass
    return True


async def _instance_at(url: str) -> str | None:
    try:
        async with httpx.AsyncClient(timeout=PROBE_TIMEOUT) as client:
            answer = (await client.get(f"{url}/health")).json()
    except (httpx.HTTPError, ValueError):
        return None
    return answer.get("instance") if isinstance(answer, dict) else None


async def _occupant(url: str) -> str | None:
    """What answers at `url` (None: nothing listens there)."""
    try:
        async with httpx.AsyncClient(timeout=PROBE_TIMEOUT) as client:
            response = await client.get(f"{url}/health")
    except (httpx.ConnectError, httpx.ConnectTimeout):
        return None
    except httpx.HTTPError as error:
        return f"a process that does not answer ({type(error).__name__})"
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("instance"):
        return f"another Hermes Bridge (instance {body['instance']})"
    return f"another server (GET /health answered {response.status_code})"
