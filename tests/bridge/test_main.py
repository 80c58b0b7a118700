"""The Bridge on its own (issue 12 §3): `python -m bridge` and `hermes-chat bridge` blank their
secrets out of every log line, as `serve` does: the token, the default key and every key
BRIDGE_KEY_ENVS lets a model use (a provider may echo a key back in its error). `hermes-chat
bridge` reads those keys from `.env` too, like its other settings."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import httpx
import pytest

from core.logs import REDACTED
from hermes_chat.bridge_process import wait_ready
from tests.conftest import TEST_CONFIG_YAML
from tests.fakes.llm_server import ScriptedLLM, error_reply
from tests.support.processes import code_path, free_port
from tests.fakes.changes import WAIT

SECRETS = {
    "BRIDGE_TOKEN": "SECRETbridgetoken7d6c5b",
    "OPENAI_API_KEY": "sk-SECRETdefault4e3f2a",
    "TEAM_KEY": "sk-SECRETteam9a8b7c",
}


def _echoing(key: str) -> object:
    return error_reply(401, f"Incorrect API key provided: {key}.")


@pytest.mark.parametrize("command", [("bridge",), ("hermes_chat", "bridge")],
                         ids=["python -m bridge", "hermes-chat bridge"])
async def test_the_bridge_on_its_own_never_logs_its_secrets(
    tmp_path: Path, llm: ScriptedLLM, command: tuple[str, ...]
) -> None:
    llm.script(*[_echoing(SECRETS["TEAM_KEY"])] * 4, *[_echoing(SECRETS["OPENAI_API_KEY"])] * 4)
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(TEST_CONFIG_YAML, encoding="utf-8")
    port = free_port()
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PYTHONPATH": code_path(),
           "BRIDGE_PORT": str(port), "HERMES_HOME": str(home), "BRIDGE_KEY_ENVS": "TEAM_KEY",
           "OPENAI_BASE_URL": llm.base_url, "HERMES_MODEL": llm.model,
           "LOG_LEVEL": "DEBUG", "LOG_FORMAT": "json", **SECRETS}
    if command[0] == "hermes_chat":  # it reads .env like every hermes-chat command: keys too
        (tmp_path / ".env").write_text(f"TEAM_KEY={env.pop('TEAM_KEY')}\n", encoding="utf-8")
    log = tmp_path / "bridge.log"
    with log.open("wb") as sink:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", *command, cwd=tmp_path, env=env, stdout=sink, stderr=sink)
    url = f"http://127.0.0.1:{port}"
    auth = {"Authorization": f"Bearer {SECRETS['BRIDGE_TOKEN']}"}
    try:
        await wait_ready(url, process)
        async with httpx.AsyncClient(base_url=url, headers=auth, timeout=WAIT) as client:
            # uvicorn logs each request line: a path holding the token is a line to blank.
            assert (await client.get(f"/runs/{SECRETS['BRIDGE_TOKEN']}")).status_code == 200
            team = {"name": llm.model, "base_url": llm.base_url, "api_key_env": "TEAM_KEY"}
            for n, model in enumerate((team, None)):
                body = {"run_id": f"run-{n}", "session_id": f"chat-{n}", "user_message": "hi",
                        "model": model}
                async with client.stream("POST", "/run", json=body) as response:
                    events = [line async for line in response.aiter_lines()]
                assert any("llm_error" in line for line in events), events
    finally:
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.wait(), WAIT)
    text = log.read_text(encoding="utf-8", errors="replace")
    lines = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    assert any(entry["level"] == "DEBUG" for entry in lines), text[-3000:]
    assert any(f"/runs/{REDACTED}" in entry["message"] for entry in lines), text[-3000:]
    for name, value in SECRETS.items():
        assert value not in text, f"{name} appears in the log of {' '.join(command)}"
    # Both keys really were sent (and refused), the team key from .env for hermes-chat bridge.
    assert {f"Bearer {SECRETS[k]}" for k in ("TEAM_KEY", "OPENAI_API_KEY")} <= set(
        llm.authorizations)
