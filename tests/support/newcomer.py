"""A newcomer's `serve`: the README's first-screen `.env` written to a fresh folder (the model
pointed at the scripted LLM), `serve` run there as `./scripts/serve` would, and `hermes-chat
chat` started beside it in a pseudo-terminal (tests/hermes_chat/test_first_hour.py, test_chat.py)."""

from __future__ import annotations

import asyncio
import os
import re
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.fakes.llm_server import ScriptedLLM
from tests.hermes_chat.terminal import Terminal
from tests.support.processes import ROOT, code_path, free_port
from tests.support.replicas import interrupted
from tests.fakes.changes import WAIT

FIRST_SCREEN = 60  # lines of the README a newcomer reads before trying


def quick_start(readme: str) -> tuple[list[str], list[str]]:
    """The lines of the one `dotenv` block of the README's first screen, and of the `sh`
    block that follows it."""
    blocks = re.findall(r"^```(\w*)\n(.*?)^```$", "\n".join(readme.splitlines()[:FIRST_SCREEN]),
                        flags=re.M | re.S)
    kinds = [kind for kind, _ in blocks]
    assert kinds.count("dotenv") == 1, kinds
    at = kinds.index("dotenv")
    assert kinds[at + 1] == "sh", kinds
    return blocks[at][1].splitlines(), blocks[at + 1][1].splitlines()


@dataclass
class Service:
    """A `serve` in a folder of its own, set up by the README's `.env` alone."""

    folder: Path
    env: dict[str, str]  # the process environment: nothing of hermes-chat's in it
    url: str
    log: Path
    process: asyncio.subprocess.Process | None = None

    async def start(self, bridge: str = "ok") -> None:
        """Start `serve` as ./scripts/serve does (its output appended to `log`); return once
        healthy."""
        with self.log.open("ab") as sink:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "hermes_chat", "serve", cwd=self.folder, env=self.env,
                stdout=sink, stderr=sink)
        await _healthy(self, bridge)

    async def stop(self) -> None:
        if self.process is not None:
            await interrupted(self.process)

    def chat(self, *args: str) -> Terminal:
        return Terminal.start(["-m", "hermes_chat", "chat", *args], self.folder, self.env)

    async def get(self, path: str) -> httpx.Response:
        return await self.call("GET", path)

    async def call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        async with httpx.AsyncClient(base_url=self.url, timeout=10.0) as http:
            return await http.request(method, path, **kwargs)


def newcomer_env() -> dict[str, str]:
    """The environment of someone who has never set hermes-chat up: only the .env counts."""
    unset = ("DATABASE_", "SLACK_", "DISCORD_", "ADMIN_", "BRIDGE_", "HERMES_", "OPENAI_",
             "RUN_", "MODELS_", "SKILLS_", "LOG_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(unset)}
    return {**env, "PYTHONPATH": code_path()}


def write_env(folder: Path, llm: ScriptedLLM, *more: str) -> int:
    """The README's .env, its endpoint the scripted model, plus free ports (other tests share
    this machine); the port the service listens on."""
    dotenv, _ = quick_start((ROOT / "README.md").read_text(encoding="utf-8"))
    lines = [f"OPENAI_BASE_URL={llm.base_url}" if line.startswith("OPENAI_BASE_URL=") else line
             for line in dotenv]
    port = free_port()
    lines += [f"ADMIN_PORT={port}", f"BRIDGE_PORT={free_port()}",
              f"DATABASE_URL=sqlite://{folder / 'data' / 'hermes-chat.sqlite3'}", *more]
    (folder / ".env").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return port


@asynccontextmanager
async def service(folder: Path, llm: ScriptedLLM, *more: str,
                  bridge: str = "ok") -> AsyncIterator[Service]:
    """`serve` on the README's .env and the `more` lines of .env given, once its health
    says `bridge` of the Bridge."""
    port = write_env(folder, llm, *more)
    running = Service(folder, newcomer_env(), f"http://127.0.0.1:{port}", folder / "serve.log")
    try:
        await running.start(bridge)
        yield running
    finally:
        await running.stop()


async def _healthy(running: Service, bridge: str) -> None:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        assert running.process and running.process.returncode is None, running.log.read_text()
        try:
            if (await running.get("/api/health")).json().get("bridge") == bridge:
                return
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.1)  # polling a starting process, with a deadline
    raise AssertionError(f"serve never became healthy:\n{running.log.read_text()}")
