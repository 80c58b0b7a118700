"""The Bridge as a child process of `serve`, when HERMES_BRIDGE_URL names no external one.

The agent runs in its own process (hermes-agent is synchronous and heavy), started with the
same settings, watched for readiness, and stopped with SIGTERM when `serve` stops.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from contextlib import asynccontextmanager
from collections.abc import AsyncIterator

import httpx

from core.config import Settings
from core.errors import BridgeUnavailable

log = logging.getLogger("hermes_chat.bridge")
READY_DEADLINE = 60.0


@asynccontextmanager
async def bridge_child(settings: Settings) -> AsyncIterator[str | None]:
    """Yield the Bridge URL: the external one as it is, or a child's once it answers /health."""
    if settings.hermes_bridge_url:
        log.info("bridge: using the external one at %s", settings.hermes_bridge_url)
        yield settings.hermes_bridge_url
        return
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_chat", "bridge", env=dict(os.environ),
    )
    try:
        await wait_ready(settings.bridge_url, child)
        log.info("bridge: started as process %s on %s", child.pid, settings.bridge_url)
        yield settings.bridge_url
    finally:
        await _stop(child)


async def wait_ready(url: str, child: asyncio.subprocess.Process) -> None:
    async with httpx.AsyncClient(timeout=1.0) as client:
        async with asyncio.timeout(READY_DEADLINE):
            while True:
                if child.returncode is not None:
                    raise BridgeUnavailable(f"the Bridge process exited with {child.returncode}")
                try:
                    if (await client.get(f"{url}/health")).status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.2)  # polling a starting process, with a deadline


async def _stop(child: asyncio.subprocess.Process) -> None:
    if child.returncode is not None:
        return
    child.send_signal(signal.SIGTERM)
    try:
        await asyncio.wait_for(child.wait(), 10)
    except TimeoutError:
        child.kill()
        await child.wait()
    log.info("bridge: stopped")
