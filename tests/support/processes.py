"""`hermes-chat serve` as a person runs it, in a child process: free ports, the environment it
is given, and waiting for it to answer."""

from __future__ import annotations

import asyncio
import itertools
import os
import random
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

import httpx
from tests.fakes.changes import WAIT

ROOT = Path(__file__).parents[2]


def _ephemeral_low() -> int:
    """The lowest port the kernel hands out to outgoing connections and to bind(port 0)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default range starts here


# Ports for a child process that binds them later come from below the kernel's ephemeral range:
# a port taken there (bind to port 0, then closed) can be taken meanwhile by any outgoing
# connection on the machine, another test worker's database or HTTP client, and the child then
# fails to bind and exits 1. Each test process walks its own share of that range (one of
# SHARES, by its xdist worker and pass) from a random start: two processes walking the same
# ports at the same pace each find a port free that the other's child is about to bind.
SHARES = 32


def _share() -> int:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    index = int(worker) if worker.isdigit() else 0
    return (index + (SHARES // 2 if os.environ.get("HERMES_TEST_DB") == "postgres" else 0)) % SHARES


_LOW_PORTS = range(10_000 + _share(), min(_ephemeral_low(), 32_768), SHARES)
_next_port = itertools.count(random.randrange(len(_LOW_PORTS)))


def free_port() -> int:
    """A loopback port nobody listens on now, from outside the ephemeral range and from this
    process's share of it."""
    for _ in range(len(_LOW_PORTS)):
        port = _LOW_PORTS[next(_next_port) % len(_LOW_PORTS)]
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port below the ephemeral range")


def serve_env(**extra: str) -> dict[str, str]:
    """Nothing configured but free ports (other test processes share the machine): the
    database and HERMES_HOME are the embedded defaults under the working directory."""
    unset = ("DATABASE_", "SLACK_", "DISCORD_", "ADMIN_", "BRIDGE_", "HERMES_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(unset)}
    env.update(PYTHONPATH=code_path(), BRIDGE_PORT=str(free_port()), **extra)
    return env


def code_path() -> str:
    """PYTHONPATH for a process started in another folder: this checkout's code first (the
    editable install may point at another checkout), then whatever was there."""
    return os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)


def wait_healthy(url: str, process: subprocess.Popen[str]) -> httpx.Response:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()[0]
        try:
            return httpx.get(url, timeout=1.0)
        except httpx.TransportError:
            time.sleep(0.1)  # polling a starting process with a deadline, not waiting for time
    raise AssertionError(f"{url} never answered")


_logs: dict[int, str] = {}  # serve's pid: the file its output goes to (shown if it exits early)


def serve_into(log: TextIO, tmp_path: Path, port: int, **env: str) -> subprocess.Popen[str]:
    process = subprocess.Popen([sys.executable, "-m", "hermes_chat", "serve"], cwd=tmp_path,
                               text=True, env=serve_env(ADMIN_PORT=str(port), **env), stdout=log,
                               stderr=subprocess.STDOUT)
    _logs[process.pid] = log.name
    return process


def _exited(process: subprocess.Popen[str]) -> str:
    log = Path(_logs.get(process.pid, ""))
    output = log.read_text(errors="replace") if log.is_file() else "(its output went elsewhere)"
    return f"serve exited with {process.returncode}:\n{output}"


async def health_until(http: httpx.AsyncClient, process: subprocess.Popen[str],
                       wanted: Callable[[httpx.Response], bool]) -> httpx.Response:
    """Poll /api/health (the process starting, then changing) until `wanted`, with a deadline."""
    async with asyncio.timeout(WAIT):
        while True:
            assert process.poll() is None, _exited(process)
            try:
                response = await http.get("/api/health", timeout=5.0)
                if wanted(response):
                    return response
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)  # polling a separate process with a deadline
