"""A `hermes-chat serve` given every secret, each a distinctive value a test then looks for
(tests/security/test_secrets.py, test_bridge_environment.py)."""

from __future__ import annotations

import asyncio
import time

import httpx

SECRETS = {
    "SLACK_BOT_TOKEN": "xoxb-SECRETslackbot4c1d7e",
    "SLACK_SIGNING_SECRET": "SECRETsigning9a8b7c6d",
    "DISCORD_TOKEN": "SECRETdiscord5e4f3a2b",
    "ADMIN_TOKEN": "SECRETadmin1f2e3d4c",
    "OPENAI_API_KEY": "sk-SECRETopenai7b6a5c4d",
}
DEADLINE = 90.0  # the Bridge child imports hermes-agent before it answers


async def until_healthy(http: httpx.AsyncClient, process: asyncio.subprocess.Process) -> None:
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        assert process.returncode is None, "serve exited"
        try:
            if (await http.get("/api/health")).json().get("bridge") == "ok":
                return
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.2)  # polling a starting process with a deadline
    raise AssertionError("serve never became healthy")
