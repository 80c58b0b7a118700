"""Requirement (issue 12 §3): "the child Bridge gets only the environment it needs: no
Slack/Discord/admin tokens, no DATABASE_URL".

`hermes-chat serve` runs as a person runs it, with Slack and Discord configured (against the
fakes), an admin token, an explicit DATABASE_URL and a model whose key is in a variable of its
own; the environment of its child Bridge process is read from /proc."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

import httpx

from tests.fakes.discordfake import FakeDiscord
from tests.fakes.slack import FakeSlack
from tests.support.processes import free_port, serve_env
from tests.support.secret_serve import DEADLINE, SECRETS, until_healthy

FAST_KEY = "sk-SECRETfastmodel0c1d2e"


def _environ_of(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    pairs = (entry.split(b"=", 1) for entry in raw.split(b"\0") if entry)
    return {k.decode(): v.decode() for k, v in pairs}


async def test_the_child_bridge_holds_no_bot_token_admin_token_or_database_url(
    tmp_path: Path,
) -> None:
    (tmp_path / "models.toml").write_text(
        '[[models]]\nid = "fast"\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'api_key_env = "FAST_API_KEY"\ndefault = true\n', encoding="utf-8")
    port = free_port()
    database = f"sqlite://{tmp_path / 'service.sqlite3'}"
    async with FakeSlack(bot_token=SECRETS["SLACK_BOT_TOKEN"]) as slack, \
            FakeDiscord(token=SECRETS["DISCORD_TOKEN"]) as discord:
        env = serve_env(**SECRETS, ADMIN_PORT=str(port), DATABASE_URL=database,
                   FAST_API_KEY=FAST_KEY, GITHUB_TOKEN="ghp-not-for-the-agent",
                   SLACK_API_URL=slack.api_url, DISCORD_API_URL=discord.api_base,
                   DISCORD_GATEWAY_URL=discord.gateway_url)
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "hermes_chat", "serve", cwd=tmp_path, env=env,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
                await until_healthy(http, process)
                pid = (await http.get("/api/health")).json()["bridgeProcess"]["pid"]
            child = _environ_of(pid)
        finally:
            process.send_signal(signal.SIGINT)
            await asyncio.wait_for(process.wait(), DEADLINE)

    for name in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "DISCORD_TOKEN",
                 "ADMIN_TOKEN", "DATABASE_URL", "GITHUB_TOKEN", "SLACK_API_URL"):
        assert name not in child, name
    everything = "\0".join(f"{k}={v}" for k, v in child.items())
    for name in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "DISCORD_TOKEN", "ADMIN_TOKEN"):
        assert SECRETS[name] not in everything, f"the value of {name} is in the child's env"
    assert database not in everything
    # What it does get: its token, the default key, and the one key the catalogue names.
    assert len(child["BRIDGE_TOKEN"]) >= 32
    assert child["OPENAI_API_KEY"] == SECRETS["OPENAI_API_KEY"]
    assert (child["BRIDGE_KEY_ENVS"], child["FAST_API_KEY"]) == ("FAST_API_KEY", FAST_KEY)
    assert child["PATH"] == env["PATH"]
