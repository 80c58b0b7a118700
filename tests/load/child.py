"""A bench run as a child process, as its README command runs it, within a deadline."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


async def run_module(module: str, *args: str, deadline: float) -> tuple[int, str, str]:
    """`python -m module args...` from the repository root: (exit code, stdout, stderr);
    killed, and TimeoutError raised, past `deadline` seconds."""
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", module, *args, cwd=ROOT,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await asyncio.wait_for(child.communicate(), deadline)
    except TimeoutError:
        child.kill()
        await child.wait()
        raise
    assert child.returncode is not None
    return child.returncode, out.decode(), err.decode()
