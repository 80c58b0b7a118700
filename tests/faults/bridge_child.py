"""A real Bridge in a child process (`python -m bridge`, as `serve` starts it: a token, an
instance id its /health must name) on a fixed loopback port, which a test kills with SIGKILL and
starts again on the same port: the Bridge restarted mid-run, knowing none of the runs it had."""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from hermes_chat.bridge_process import wait_ready  # the readiness check of `serve`
from tests.support.processes import free_port

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class BridgeChild:
    home: Path  # HERMES_HOME; its bridge.log keeps every child's output for a failing test
    port: int = field(default_factory=free_port)
    token: str = field(default_factory=lambda: secrets.token_urlsafe(16))
    process: asyncio.subprocess.Process | None = None
    instance: str | None = None
    starts: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        """Start a Bridge on the port and wait until it answers /health."""
        env = {**os.environ, "BRIDGE_HOST": "127.0.0.1", "BRIDGE_PORT": str(self.port),
               "HERMES_HOME": str(self.home), "BRIDGE_TOKEN": self.token}
        env.pop("HERMES_BRIDGE_URL", None)
        self.instance = uuid.uuid4().hex
        with (self.home / "bridge.log").open("ab") as log:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bridge", "--instance", self.instance, env=env, cwd=ROOT,
                stdout=log, stderr=log)
        self.starts += 1
        await wait_ready(self.url, self.process, self.instance)

    async def kill(self) -> None:
        """SIGKILL: no clean-up of any kind, open streams are cut by the kernel."""
        if self.process is not None and self.process.returncode is None:
            self.process.send_signal(signal.SIGKILL)
            await self.process.wait()
        self.process = None
