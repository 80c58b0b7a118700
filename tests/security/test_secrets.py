"""Requirement (issue #8 §5): "tokens and API keys never appear in logs or exports".

`hermes-chat serve` runs as a person runs it (a subprocess, its Bridge a child of it) with
every secret set to a distinctive value, DEBUG logs in JSON, the fake Slack and Discord and a
scripted LLM that refuses the key (401). It serves a Slack conversation and a Discord one
whose runs fail, refuses a forged Slack request and wrong admin tokens, and exports; no secret
may appear in any line either process wrote, nor in an export."""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import sys
import time
from pathlib import Path

import httpx
import pytest

from core.config import Settings
from core.logs import OWN_PACKAGES, QUIET_LIBRARIES, REDACTED, configure_logging

from tests.bots.discord.harness import mention
from tests.fakes.discordfake import FakeDiscord
from tests.fakes.llm_server import ScriptedLLM, error_reply
from tests.fakes.slack import FakeSlack
from tests.fakes.slack_payloads import CHANNEL_ID, event_request, make_slack_event
from tests.support.processes import free_port, serve_env
from tests.support.secret_serve import DEADLINE, SECRETS, until_healthy

# A provider that echoes the whole key back in its error (some OpenAI-compatible ones do).
REFUSED = error_reply(401, f"Incorrect API key provided: {SECRETS['OPENAI_API_KEY']}.")
ENDED = ("FAILED", "SUCCESS", "STOPPED")


async def test_no_secret_reaches_the_logs_or_an_export(tmp_path: Path, llm: ScriptedLLM) -> None:
    llm.script(*[REFUSED] * 8)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    admin = {"Authorization": f"Bearer {SECRETS['ADMIN_TOKEN']}"}
    async with FakeSlack(bot_token=SECRETS["SLACK_BOT_TOKEN"]) as slack, \
            FakeDiscord(token=SECRETS["DISCORD_TOKEN"]) as discord:
        env = serve_env(**SECRETS, ADMIN_PORT=str(port), LOG_LEVEL="DEBUG", LOG_FORMAT="json",
                   SLACK_API_URL=slack.api_url, DISCORD_API_URL=discord.api_base,
                   DISCORD_GATEWAY_URL=discord.gateway_url, OPENAI_BASE_URL=llm.base_url,
                   HERMES_MODEL=llm.model)
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "hermes_chat", "serve", cwd=tmp_path, env=env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        assert process.stdout is not None
        output = asyncio.create_task(process.stdout.read())
        try:
            async with httpx.AsyncClient(base_url=url, timeout=10.0) as http:
                await until_healthy(http, process)
                exports = await _drive(http, admin, slack, discord)
        finally:
            if process.returncode is None:
                process.send_signal(signal.SIGINT)
            text = (await asyncio.wait_for(output, DEADLINE)).decode("utf-8", "replace")
            await asyncio.wait_for(process.wait(), DEADLINE)

    lines = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    assert any(entry["level"] == "DEBUG" for entry in lines), text[-2000:]
    assert any("run" in entry["message"] and entry["level"] in ("WARNING", "ERROR", "INFO")
               for entry in lines)
    assert REDACTED in text  # the echoed key was there to leak, in both processes' lines
    for name, value in SECRETS.items():
        assert value not in text, f"{name} appears in the logs"
        for body in exports:
            assert value not in body, f"{name} appears in an export"
    assert any("Incorrect API key provided: [redacted]" in body for body in exports)


async def _drive(http: httpx.AsyncClient, admin: dict[str, str], slack: FakeSlack,
                 discord: FakeDiscord) -> list[str]:
    """A failing run from each platform, refused requests, then every export of both."""
    payload = make_slack_event("app_mention", text="hello from slack")
    signed = event_request(payload, SECRETS["SLACK_SIGNING_SECRET"])
    assert (await http.post("/slack/events", content=signed.body,
                            headers=signed.headers)).status_code == 200
    forged = event_request(make_slack_event("app_mention"), "not-the-secret")
    assert (await http.post("/slack/events", content=forged.body,
                            headers=forged.headers)).status_code == 401
    for wrong in ("Bearer " + SECRETS["ADMIN_TOKEN"][:-1], "Basic " + SECRETS["ADMIN_TOKEN"]):
        assert (await http.get("/api/chat/sessions",
                               headers={"Authorization": wrong})).status_code == 401
    await discord.wait_until(lambda: bool(discord.gateway.live_sessions()), what="the gateway session")
    await discord.send_user_message(mention(discord, "hello from discord"))
    sessions = await _ended_sessions(http, admin, count=2)
    await slack.wait_for_calls("chat.startStream")  # the answer streams
    assert slack.thread(CHANNEL_ID, payload["event"]["ts"])
    exports = []
    for session_id in sessions:
        for fmt in ("md", "json"):
            response = await http.get(f"/api/chat/sessions/{session_id}/export",
                                      params={"format": fmt, "branch": "all"}, headers=admin)
            assert response.status_code == 200
            exports.append(response.text)
    return exports


async def _ended_sessions(http: httpx.AsyncClient, admin: dict[str, str], count: int) -> list[int]:
    """The ids of `count` sessions once each has its answer ended (here: FAILED on the 401)."""
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        items = (await http.get("/api/chat/sessions", headers=admin)).json()["items"]
        ended = []
        for item in items:
            page = (await http.get(f"/api/chat/sessions/{item['id']}/messages",
                                   headers=admin)).json()["messages"]
            if len(page) == 2 and page[-1]["status"] in ENDED:
                ended.append(item["id"])
        if len(ended) >= count:
            return ended
        await asyncio.sleep(0.2)  # polling another process with a deadline
    raise AssertionError("the runs did not end")


@pytest.fixture
def root_logging() -> object:
    """configure_logging replaces the root handlers: put pytest's back afterwards."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    levels = {name: logging.getLogger(name).level for name in (*OWN_PACKAGES, *QUIET_LIBRARIES)}
    yield root
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, saved in levels.items():
        logging.getLogger(name).setLevel(saved)


@pytest.mark.parametrize("format", ["json", "text"])
def test_every_part_of_a_line_is_redacted(
    root_logging: logging.Logger, capsys: pytest.CaptureFixture[str], format: str
) -> None:
    settings = Settings.from_env(SECRETS)
    configure_logging("DEBUG", format, settings.secrets())
    log = logging.getLogger("some.library")
    token, key = SECRETS["SLACK_BOT_TOKEN"], SECRETS["OPENAI_API_KEY"]
    log.debug("headers: %s", {"Authorization": f"Bearer {token}"})
    log.info(f"key {key} refused", extra={"request": {"api_key": key}})
    try:
        raise RuntimeError(f"provider said: bad key {key}")
    except RuntimeError:
        log.exception("call failed with %s", SECRETS["DISCORD_TOKEN"])
    written = capsys.readouterr().err
    assert written.count(REDACTED) >= (5 if format == "json" else 4) and "provider said: bad key [redacted]" in written
    for value in SECRETS.values():
        assert value not in written
    assert set(settings.secrets()) == set(SECRETS.values())


def test_short_values_are_not_blanked(root_logging: logging.Logger,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("INFO", "text", ["abc", ""])
    logging.getLogger("hermes_chat.x").info("abcdef stays readable")
    assert "abcdef stays readable" in capsys.readouterr().err


def test_the_database_password_and_every_key_a_model_may_use_are_redacted(
    root_logging: logging.Logger, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Issue 12 §3: what `hermes-chat` (every command) blanks besides the tokens."""
    from hermes_chat.cli import _secrets

    models = tmp_path / "models.toml"
    models.write_text('[[models]]\nid = "fast"\napi_key_env = "FAST_API_KEY"\n', encoding="utf-8")
    env = {"DATABASE_URL": "postgres://hermes:SECRET%40db-pass@db.internal:5432/hermes",
           "MODELS_FILE": str(models), "FAST_API_KEY": "sk-SECRETfast1234",
           "BRIDGE_KEY_ENVS": "TEAM_KEY", "TEAM_KEY": "sk-SECRETteam5678",
           "BRIDGE_TOKEN": "SECRETbridge0987", "UNLISTED_KEY": "sk-not-a-secret-of-ours"}
    settings = Settings.from_env(env)
    configure_logging("INFO", "text", _secrets(settings, env))
    logging.getLogger("tortoise").warning("connecting to %s (password SECRET@db-pass)",
                                          env["DATABASE_URL"])
    logging.getLogger("hermes_chat.x").info("keys: %s %s, token %s", env["FAST_API_KEY"],
                                            env["TEAM_KEY"], env["BRIDGE_TOKEN"])
    written = capsys.readouterr().err
    for secret in ("SECRET%40db-pass", "SECRET@db-pass", env["FAST_API_KEY"], env["TEAM_KEY"],
                   env["BRIDGE_TOKEN"]):
        assert secret not in written
    assert f"postgres://hermes:{REDACTED}@db.internal:5432/hermes" in written
    assert f"keys: {REDACTED} {REDACTED}, token {REDACTED}" in written
    assert "sk-not-a-secret-of-ours" not in _secrets(settings, env)  # only what may be used
