"""`hermes-chat serve` as a person runs it, in a child process: free ports, the environment it
is given, and waiting for it to answer."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

import httpx

DEADLINE = 30.0
ROOT = Path(__file__).parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()[0]
        try:
            return httpx.get(url, timeout=1.0)
        except httpx.TransportError:
            time.sleep(0.1)  # polling a starting process with a deadline, not waiting for time
    raise AssertionError(f"{url} never answered")


def serve_into(log: TextIO, tmp_path: Path, port: int, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "hermes_chat", "serve"], cwd=tmp_path,
                            text=True, env=serve_env(ADMIN_PORT=str(port), **env), stdout=log,
                            stderr=subprocess.STDOUT)


async def health_until(http: httpx.AsyncClient, process: subprocess.Popen[str],
                       wanted: Callable[[httpx.Response], bool]) -> httpx.Response:
    """Poll /api/health (the process starting, then changing) until `wanted`, with a deadline."""
    async with asyncio.timeout(DEADLINE):
        while True:
            assert process.poll() is None, "serve exited"
            try:
                response = await http.get("/api/health", timeout=5.0)
                if wanted(response):
                    return response
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)  # polling a separate process with a deadline
