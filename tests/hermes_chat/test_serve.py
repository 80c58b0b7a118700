"""`hermes-chat serve` and `migrate` as a person runs them: a real subprocess on a fresh SQLite file."""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import pytest

from bots.discord.supervisor import FATAL_CLOSE_CODES
from tests.conftest import new_database
from tests.fakes.discordfake import FakeDiscord
from tests.fakes.slack import FakeSlack
from tests.fakes.slack_payloads import app_mention_event, event_request, make_slack_event
from tests.files import shared_stream_pdf
from tests.support.processes import (
    ROOT,
    free_port,
    health_until,
    serve_env,
    serve_into,
    wait_healthy,
)
from tests.fakes.changes import WAIT

MIGRATIONS = ROOT / "migrations"


def _start_serve(tmp_path: Path, **env: str) -> tuple[subprocess.Popen[str], int]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "hermes_chat", "serve"], cwd=tmp_path, text=True,
        env=serve_env(ADMIN_PORT=str(port), **env),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    return process, port


def test_serve_starts_with_nothing_configured_and_stops_on_sigint(tmp_path: Path) -> None:
    process, port = _start_serve(tmp_path)
    try:
        response = wait_healthy(f"http://127.0.0.1:{port}/api/health", process)
        assert response.status_code == 200
        health = response.json()
        child = health.pop("bridgeProcess")  # serve's own child Bridge, supervised
        # no model set: every run would fail, so the service is degraded and says so
        assert health == {"status": "degraded", "database": "ok", "bridge": "ok", "model": None}
        assert (child["state"], child["restarts"], child["lastExit"]) == ("running", 0, None)
        assert isinstance(child["pid"], int) and len(child["instance"]) == 32
        metrics = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
        assert "hermes_runs_active 0.0" in metrics and "hermes_events_total 0.0" in metrics
        assert "hermes_bridge_up 1.0" in metrics and "hermes_bridge_restarts_total 0.0" in metrics
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=WAIT)
    finally:
        process.kill()
    assert process.returncode == 0, output
    assert "bridge: started as process" in output and "bridge: stopped" in output
    assert "slack: not started" in output and "discord: not started" in output
    assert "this replica runs the upkeep jobs" in output
    assert output.rstrip().endswith("stopped")
    files = sorted(MIGRATIONS.glob("0*.py"))
    migrations = ", ".join(f"hermes.{p.stem}" for p in files)
    assert (f"database: sqlite data/hermes-chat.sqlite3, {len(files)} new migrations applied: "
            f"{migrations}") in output
    assert (tmp_path / "data" / "hermes-chat.sqlite3").exists()  # the embedded default
    _assert_a_quiet_start(output)


STARTING_PARTS = ("database", "bridge", "runtime", "model", "slack", "discord", "admin API")
STOPPING = ["bridge: stopped", "stopped"]


def _assert_a_quiet_start(output: str) -> None:
    """One line per part, each part named once: none of hermes-agent's plugin discovery, the
    child Bridge's own banner, uvicorn's, the scheduler's jobs or the ORM's shutdown."""
    messages = [line.split(": ", 1)[1] for line in output.strip().splitlines()]
    starting, stopping = messages[:-len(STOPPING)], messages[-len(STOPPING):]
    assert stopping == STOPPING, output
    assert len(starting) <= len(STARTING_PARTS), output
    assert sorted(m.split(":", 1)[0] for m in starting) == sorted(STARTING_PARTS), output


def test_an_unreachable_external_bridge_leaves_the_service_up_but_degraded(tmp_path: Path):
    process, port = _start_serve(tmp_path, HERMES_BRIDGE_URL="http://127.0.0.1:9")
    try:
        response = wait_healthy(f"http://127.0.0.1:{port}/api/health", process)
        assert response.json() == {"status": "degraded", "database": "ok", "bridge": "unreachable",
                                   "model": {"name": None, "endpoint": None,
                                             "setBy": "HERMES_BRIDGE_URL"}}
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=WAIT)


def _run(tmp_path: Path, command: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hermes_chat", command], cwd=tmp_path, text=True,
        env=serve_env(**env), capture_output=True, timeout=WAIT,
    )


def test_serve_refuses_a_public_address_without_an_admin_token(tmp_path: Path) -> None:
    result = _run(tmp_path, "serve", ADMIN_HOST="0.0.0.0")
    assert result.returncode == 2
    assert "ADMIN_TOKEN is unset" in result.stderr


@pytest.mark.db
async def test_migrate_applies_the_same_files_to_a_fresh_database_once(tmp_path: Path) -> None:
    """On SQLite and on PostgreSQL: every file of migrations/ the first time, none the second."""
    names = sorted(p.stem for p in MIGRATIONS.glob("0*.py"))
    async with new_database(tmp_path) as url:
        first = await _migrate(tmp_path, url)
        second = await _migrate(tmp_path, url)
    assert re.findall(r"applied migration hermes\.(\w+)", first) == names, first
    assert f"database migrated ({len(names)} new migrations applied)" in first
    assert "applied migration" not in second and "(0 new migrations applied)" in second


async def _migrate(tmp_path: Path, database_url: str) -> str:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_chat", "migrate", cwd=tmp_path,
        env=serve_env(DATABASE_URL=database_url),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await asyncio.wait_for(process.communicate(), WAIT)
    assert process.returncode == 0, output.decode()
    return output.decode()


def test_a_bad_setting_is_a_clear_error(tmp_path: Path) -> None:
    result = _run(tmp_path, "migrate", ADMIN_PORT="eighty")
    assert result.returncode == 2
    assert "ADMIN_PORT must be an integer" in result.stderr


async def test_serve_shows_the_discord_gateway_in_health_and_metrics(tmp_path: Path) -> None:
    """A real `serve` on the fake Discord: health lists discord `ok`; once the gateway is
    closed with 4004 it says why, and past PLATFORM_DOWN_SECONDS answers 503."""
    async with FakeDiscord() as discord:
        port = free_port()
        with (tmp_path / "serve.log").open("w") as log:
            process = serve_into(log, tmp_path, port, **_on_discord(discord),
                                  PLATFORM_DOWN_SECONDS="1")
            try:
                async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
                    up = await health_until(http, process, lambda r: _discord(r) == "ok")
                    assert up.status_code == 200
                    await discord.disconnect(code=4004)
                    down = await health_until(http, process, lambda r: r.status_code == 503)
                    assert down.json()["platforms"] == {"discord": {
                        "state": "down", "reason": FATAL_CLOSE_CODES[4004]}}
                    metrics = (await http.get("/metrics")).text
                    assert 'hermes_platform_connected{platform="discord"} 0.0' in metrics
            finally:
                process.send_signal(signal.SIGINT)
                await asyncio.to_thread(process.wait, WAIT)
    output = (tmp_path / "serve.log").read_text()
    assert process.returncode == 0, output
    assert "not reconnecting: authentication failed (close code 4004)" in output
    assert len(discord.gateway.connections) == 1


def _on_discord(discord: FakeDiscord) -> dict[str, str]:
    return {"DISCORD_TOKEN": discord.token, "DISCORD_API_URL": discord.api_base,
            "DISCORD_GATEWAY_URL": discord.gateway_url}


def _discord(response: httpx.Response) -> str | None:
    state: str | None = response.json().get("platforms", {}).get("discord", {}).get("state")
    return state


async def test_serve_on_both_platforms_starts_with_one_line_each(tmp_path: Path) -> None:
    """Slack over Socket Mode and Discord over its gateway, both on their fakes: each platform
    is one line, like every other part, with no library's own start-up lines besides."""
    async with FakeDiscord() as discord, FakeSlack(bot_token="xoxb-test") as slack:
        port = free_port()
        with (tmp_path / "serve.log").open("w") as log:
            process = serve_into(log, tmp_path, port, **_on_discord(discord),
                                  SLACK_BOT_TOKEN="xoxb-test", SLACK_APP_TOKEN="xapp-test",
                                  SLACK_API_URL=slack.api_url)
            try:
                async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
                    await health_until(http, process, lambda r: _platforms_up(r, "slack",
                                                                               "discord"))
            finally:
                process.send_signal(signal.SIGINT)
                await asyncio.to_thread(process.wait, WAIT)
    output = (tmp_path / "serve.log").read_text()
    assert process.returncode == 0, output
    assert "slack: started (Socket Mode)" in output and "discord: started" in output
    lines = output.splitlines(keepends=True)
    connected = [line for line in lines if line.endswith(CONNECTED)]
    assert len(connected) == 2, output  # each platform once
    _assert_a_quiet_start("".join(line for line in lines if line not in connected))


# State changes each platform reports on every (re)connection, not start-up lines.
CONNECTED = ("INFO bots.slack.supervisor: slack: connected in Socket Mode\n",
             "INFO bots.discord.bot: discord: gateway connected (READY)\n")


def _platforms_up(response: httpx.Response, *names: str) -> bool:
    platforms = response.json().get("platforms", {})
    return all(platforms.get(name, {}).get("state") == "ok" for name in names)


async def test_serve_stops_a_file_being_read_when_it_stops(tmp_path: Path) -> None:
    """SIGINT while a hostile PDF is being read (ATTACHMENT_PARSE_SECONDS at its 10 s): serve
    stops at once, with no traceback, and leaves no worker process behind."""
    async with FakeSlack(bot_token="xoxb-test") as slack:
        port = free_port()
        bomb = slack.share_file("bomb.pdf", shared_stream_pdf(), "application/pdf")
        with (tmp_path / "serve.log").open("w") as log:
            process = serve_into(log, tmp_path, port, SLACK_BOT_TOKEN="xoxb-test",
                                  SLACK_SIGNING_SECRET="serve-secret", SLACK_API_URL=slack.api_url)
            try:
                async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
                    await health_until(http, process, lambda r: r.status_code == 200)
                    event = make_slack_event({**app_mention_event("read this"), "files": [bomb]})
                    signed = event_request(event, "serve-secret")
                    posted = await http.post("/slack/events", content=signed.body,
                                             headers=signed.headers)
                    assert posted.status_code == 200
                    workers = await _reading_workers(process, slack)
            finally:
                process.send_signal(signal.SIGINT)
                stopping = time.monotonic()
                await asyncio.to_thread(process.wait, WAIT)
    output = (tmp_path / "serve.log").read_text()
    assert process.returncode == 0 and "Traceback" not in output, output
    assert time.monotonic() - stopping < 10, "serve waited for the file"
    assert not [w for w in workers if w.is_running() and w.status() != psutil.STATUS_ZOMBIE]


async def _reading_workers(process: subprocess.Popen[str], slack: FakeSlack) -> list[psutil.Process]:
    """serve's worker processes, once one has been reading the file for half a second."""
    async with asyncio.timeout(WAIT):
        while True:
            assert process.poll() is None, "serve exited"
            children = psutil.Process(process.pid).children()
            workers = [c for c in children if "spawn_main" in " ".join(c.cmdline())]
            if slack.calls_to("files-pri") and any(w.cpu_times().user > 0.5 for w in workers):
                return workers
            await asyncio.sleep(0.05)  # polling a separate process with a deadline
