"""`hermes-chat serve` starting as a newcomer meets it (issue 27): every start-up mistake is
one line on stderr with its own exit code; Ctrl-C while starting stops it; the model it will
use is said at start and shown by health; a platform unreachable at start leaves the service
up, degraded, and connects once the platform answers; `--version` and `--help`."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil
import pytest

from hermes_chat.exits import Exit
from tests.fakes.discordfake import FakeDiscord
from tests.fakes.slack import FakeSlack
from tests.support.processes import (
    free_port,
    health_until,
    serve_env,
    serve_into,
    wait_healthy,
)
from tests.fakes.changes import WAIT

STOP_SECONDS = 5.0


def _serve(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hermes_chat", "serve"], cwd=tmp_path,
                          text=True, env=serve_env(ADMIN_PORT=str(free_port()), **env),
                          capture_output=True, timeout=WAIT)


@dataclass(frozen=True)
class Mistake:
    """A start-up mistake: settings made in `tmp_path`, the exit code, words of the line."""

    settings: Callable[[Path], dict[str, str]]
    code: Exit
    says: str


def _closed_postgres(_: Path) -> dict[str, str]:
    return {"DATABASE_URL": f"postgres://hermes:s3cret-pw@127.0.0.1:{free_port()}/hermes"}


def _models_folder(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "models.toml").mkdir()
    return {"MODELS_FILE": "models.toml"}


def _models_not_text(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "models.toml").write_bytes(b"\xff\xfe[[models]]")
    return {"MODELS_FILE": "models.toml"}


def _models_not_toml(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "models.toml").write_text("[[models]\nid = ", encoding="utf-8")
    return {"MODELS_FILE": "models.toml"}


def _data_under_a_file(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "data").write_text("a file where the folder should be", encoding="utf-8")
    return {"DATABASE_URL": "sqlite://data/hermes-chat.sqlite3"}


MISTAKES = {
    "garbage DATABASE_URL": Mistake(lambda _: {"DATABASE_URL": "garbage"}, Exit.BAD_SETTING,
                                    "DATABASE_URL is not a database URL"),
    "sqlite with one slash": Mistake(lambda p: {"DATABASE_URL": f"sqlite:{p}/x.db"},
                                     Exit.BAD_SETTING, "two slashes after 'sqlite:'"),
    "mysql": Mistake(lambda _: {"DATABASE_URL": "mysql://hermes:s3cret-pw@db/hermes"},
                     Exit.BAD_SETTING, "mysql:// is not supported"),
    "postgres down": Mistake(_closed_postgres, Exit.DATABASE_UNREACHABLE,
                             "DATABASE_URL: cannot reach postgres 127.0.0.1:"),
    "models file a folder": Mistake(_models_folder, Exit.MODELS_FILE,
                                    "MODELS_FILE: cannot read models.toml (Is a directory)"),
    "models file not text": Mistake(_models_not_text, Exit.MODELS_FILE, "not UTF-8 text"),
    "models file not toml": Mistake(_models_not_toml, Exit.MODELS_FILE, "is not valid TOML"),
    "data folder unwritable": Mistake(_data_under_a_file, Exit.DATA_UNWRITABLE,
                                      "cannot write the SQLite database's folder data"),
    "slack bot token alone": Mistake(lambda _: {"SLACK_BOT_TOKEN": "xoxb-1"}, Exit.BAD_SETTING,
                                     "SLACK_BOT_TOKEN is set but SLACK_SIGNING_SECRET or "
                                     "SLACK_APP_TOKEN is not"),
    "slack app token alone": Mistake(lambda _: {"SLACK_APP_TOKEN": "xapp-1"}, Exit.BAD_SETTING,
                                     "SLACK_APP_TOKEN is set but SLACK_BOT_TOKEN is not"),
    "public admin without token": Mistake(lambda _: {"ADMIN_HOST": "0.0.0.0"},
                                          Exit.BAD_SETTING, "ADMIN_TOKEN is unset"),
}


@pytest.mark.parametrize("name", MISTAKES)
def test_a_start_up_mistake_is_one_line_with_its_own_exit_code(tmp_path: Path,
                                                               name: str) -> None:
    mistake = MISTAKES[name]
    result = _serve(tmp_path, **mistake.settings(tmp_path))
    _assert_one_line(result, mistake.code, mistake.says)


def _assert_one_line(result: subprocess.CompletedProcess[str], code: Exit, says: str) -> None:
    assert result.returncode == code, result.stderr
    assert result.stderr.count("\n") == 1 and result.stdout == "", result.stderr
    assert result.stderr.startswith("hermes-chat: ") and says in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and "s3cret-pw" not in result.stderr


def test_the_admin_port_in_use_is_found_before_anything_starts(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "hermes_chat", "serve"], cwd=tmp_path,
                                text=True, env=serve_env(ADMIN_PORT=str(port)),
                                capture_output=True, timeout=WAIT)
    _assert_one_line(result, Exit.PORT_IN_USE, f"ADMIN_PORT {port}: 127.0.0.1:{port} is in use")
    assert not (tmp_path / "data" / "hermes-chat.sqlite3").exists(), "no database made"


def test_a_second_serve_on_the_same_sqlite_file_is_one_line(tmp_path: Path) -> None:
    first = subprocess.Popen([sys.executable, "-m", "hermes_chat", "serve"], cwd=tmp_path,
                             text=True, env=serve_env(ADMIN_PORT=str(port := free_port()),
                                                 HERMES_BRIDGE_URL="http://127.0.0.1:9"),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_healthy(f"http://127.0.0.1:{port}/api/health", first)
        second = _serve(tmp_path, HERMES_BRIDGE_URL="http://127.0.0.1:9")
    finally:
        first.send_signal(signal.SIGINT)
        first.wait(WAIT)
    _assert_one_line(second, Exit.ALREADY_RUNNING, "SQLite runs one replica only")


def test_ctrl_c_while_starting_stops_at_once_without_a_traceback(tmp_path: Path) -> None:
    """Ctrl-C while the database is migrated and the Bridge starts: before, the signal was
    lost in the start-up and serve went on serving."""
    log = tmp_path / "serve.log"
    with log.open("w") as sink:
        process = subprocess.Popen([sys.executable, "-m", "hermes_chat", "serve"],
                                   cwd=tmp_path, text=True, stdout=sink,
                                   stderr=subprocess.STDOUT, start_new_session=True,
                                   env=serve_env(ADMIN_PORT=str(free_port())))
    try:
        _until_logged(log, "database: sqlite", process)
        children = psutil.Process(process.pid).children(recursive=True)
        started = time.monotonic()
        os.killpg(process.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        process.wait(WAIT)
        took = time.monotonic() - started
    finally:
        process.kill()
    output = log.read_text(encoding="utf-8")
    assert took < STOP_SECONDS and process.returncode == 0, (took, output)
    assert "Traceback" not in output and output.rstrip().endswith("stopped"), output
    assert "admin API: listening" not in output, output
    assert not any(c.is_running() and c.status() != psutil.STATUS_ZOMBIE for c in children)


def _until_logged(log: Path, text: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + WAIT
    while text not in log.read_text(encoding="utf-8"):
        assert process.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.02)  # polling another process's log, with a deadline


def test_version_and_help_say_what_the_tool_is_with_examples(tmp_path: Path) -> None:
    def run(*args: str) -> str:
        result = subprocess.run([sys.executable, "-m", "hermes_chat", *args], cwd=tmp_path,
                                text=True, env=serve_env(), capture_output=True, timeout=WAIT)
        assert result.returncode == 0, result.stderr
        return result.stdout

    from importlib.metadata import version

    assert run("--version") == f"hermes-chat {version('hermes-chat')}\n"
    top = run("--help")
    assert "composition root" not in top and "Slack" in top and "Discord" in top
    for command in ("serve", "migrate", "bridge", "chat"):
        assert f"hermes-chat {command}" in top
        usage = run(command, "--help")
        examples = usage.split("examples:\n", 1)[1]
        assert f"hermes-chat {command}" in examples, usage


async def test_serve_names_its_model_and_health_shows_it(tmp_path: Path) -> None:
    health = await _health_of(tmp_path, HERMES_MODEL="gpt-4o-mini",
                              OPENAI_BASE_URL="https://me:pw-123456@api.example.com/v1?key=k9",
                              OPENAI_API_KEY="sk-never-shown")
    output = (tmp_path / "serve.log").read_text()
    assert health["status"] == "ok"
    assert health["model"] == {"name": "gpt-4o-mini", "endpoint": "https://api.example.com/v1",
                               "setBy": "HERMES_MODEL"}
    assert ("INFO hermes_chat.serve: model: gpt-4o-mini at https://api.example.com/v1 "
            "(from HERMES_MODEL)") in output
    assert "pw-123456" not in output and "k9" not in output and "sk-never" not in output


async def test_a_models_file_default_is_the_model_and_none_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / "models.toml").write_text(
        '[[models]]\nid = "fast"\nmodel = "small-1"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'default = true\n', encoding="utf-8")
    health = await _health_of(tmp_path, MODELS_FILE="models.toml")
    assert health["model"] == {"name": "small-1", "endpoint": "http://127.0.0.1:9/v1",
                               "setBy": "MODELS_FILE"}
    assert "model: small-1 at http://127.0.0.1:9/v1 (from MODELS_FILE)" in (
        tmp_path / "serve.log").read_text()


async def test_with_external_bridges_the_model_is_theirs(tmp_path: Path) -> None:
    health = await _health_of(tmp_path, HERMES_BRIDGE_URL="http://127.0.0.1:9")
    assert health["model"] == {"name": None, "endpoint": None, "setBy": "HERMES_BRIDGE_URL"}
    assert "model: chosen by each Bridge of HERMES_BRIDGE_URL" in (
        tmp_path / "serve.log").read_text()


@pytest.mark.parametrize("public_url", ["", "https://bot.example.com"])
async def test_slack_over_http_names_the_url_to_paste(tmp_path: Path, public_url: str) -> None:
    await _health_of(tmp_path, SLACK_BOT_TOKEN="xoxb-test", PUBLIC_URL=public_url,
                     SLACK_SIGNING_SECRET="a-signing-secret", SLACK_API_URL="http://127.0.0.1:9/api/")
    port = int(re.findall(r"listening on http://127.0.0.1:(\d+)", (tmp_path / "serve.log").read_text())[0])
    output = (tmp_path / "serve.log").read_text()
    if public_url:
        assert ("slack: started (HTTP events: Request URL https://bot.example.com/slack/events "
                "in the Slack app's Event Subscriptions, Interactivity and Slash Commands)"
                ) in output, output
    else:
        assert (f"slack: started (HTTP events at http://127.0.0.1:{port}/slack/events; Slack "
                "needs a public https URL that reaches it: set PUBLIC_URL") in output, output


async def _health_of(tmp_path: Path, **env: str) -> dict[str, object]:
    """What health answers once a serve with `env` is up (serve.log keeps what it logged)."""
    async with _serving(tmp_path, **env) as (http, process):
        health: dict[str, object] = (await health_until(http, process, lambda r: True)).json()
    return health


@asynccontextmanager
async def _serving(tmp_path: Path, **env: str) -> AsyncIterator[tuple[httpx.AsyncClient,
                                                                      subprocess.Popen[str]]]:
    port = free_port()
    with (tmp_path / "serve.log").open("w") as log:
        process = serve_into(log, tmp_path, port, **env)
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
                yield http, process
        finally:
            process.send_signal(signal.SIGINT)
            await asyncio.to_thread(process.wait, WAIT)


def _platform(name: str, state: str) -> Callable[[httpx.Response], bool]:
    return lambda r: r.json().get("platforms", {}).get(name, {}).get("state") == state


@dataclass
class HangingUp:
    """A port where each connection is closed at once (the platform unreachable), and when
    each one came."""

    server: asyncio.Server
    tries: list[float]

    @property
    def port(self) -> int:
        port: int = self.server.sockets[0].getsockname()[1]
        return port

    async def close(self) -> None:
        """Stop listening (the real platform takes the port over)."""
        self.server.close()
        await self.server.wait_closed()

    async def until_tried_twice(self, process: subprocess.Popen[str], apart: float) -> None:
        """Until two tries at least `apart` seconds apart (the client's retry, not one try)."""
        async with asyncio.timeout(WAIT):
            while not self.tries or self.tries[-1] - self.tries[0] < apart:
                assert process.poll() is None, "serve exited"
                await asyncio.sleep(0.05)  # polling another process's tries, with a deadline


@asynccontextmanager
async def _hanging_up() -> AsyncIterator[HangingUp]:
    tries: list[float] = []

    async def hang_up(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        tries.append(time.monotonic())
        writer.close()

    hanging = HangingUp(await asyncio.start_server(hang_up, "127.0.0.1", 0, reuse_address=True),
                        tries)
    try:
        yield hanging
    finally:
        await hanging.close()


async def test_discord_unreachable_at_start_leaves_serve_up_and_connects_later(
    tmp_path: Path,
) -> None:
    """Discord hangs up at start: serve stays up, degraded, logging in again with backoff and
    one line about it; once Discord answers on that port, it connects."""
    token = "fake-bot-token"
    async with _hanging_up() as discord:
        api = f"http://127.0.0.1:{discord.port}"
        async with _serving(tmp_path, DISCORD_TOKEN=token, DISCORD_API_URL=f"{api}/api/v10",
                            DISCORD_GATEWAY_URL=f"ws://127.0.0.1:{discord.port}/gateway"
                            ) as (http, process):
            down = await health_until(http, process, _platform("discord", "reconnecting"))
            assert down.status_code == 200 and down.json()["status"] == "degraded"
            assert "log-in failed" in down.json()["platforms"]["discord"]["reason"]
            await discord.until_tried_twice(process, apart=2.5)  # three tries: 1 s, 2 s apart
            port = discord.port
            await discord.close()
            async with FakeDiscord(token=token, port=port):
                up = await health_until(http, process, _platform("discord", "ok"))
                assert up.json()["platforms"]["discord"] == {"state": "ok", "reason": None}
    output = (tmp_path / "serve.log").read_text()
    assert process.returncode == 0, output
    assert "Traceback" not in output, output
    before, connected, _ = output.partition("discord: gateway connected (READY)")
    # a line for each new reason (the hang-up is seen as a disconnect or a reset), not a try
    assert connected and 1 <= before.count("discord: log-in failed") <= 2, output


async def test_socket_mode_unreachable_at_start_is_one_line_until_it_connects(
    tmp_path: Path,
) -> None:
    """Slack hangs up: slack_sdk tries again every ten seconds, logged once (it logged a
    traceback each time); once the (fake) Slack answers on that port, Socket Mode connects."""
    async with _hanging_up() as slack:
        async with _serving(tmp_path, SLACK_BOT_TOKEN="xoxb-test", SLACK_APP_TOKEN="xapp-test",
                            SLACK_API_URL=f"http://127.0.0.1:{slack.port}/api/"
                            ) as (http, process):
            down = await health_until(http, process, _platform("slack", "reconnecting"))
            assert down.json()["status"] == "degraded"
            await slack.until_tried_twice(process, apart=5)  # slack_sdk's ten seconds
            port = slack.port
            await slack.close()
            async with FakeSlack(bot_token="xoxb-test", port=port):
                await health_until(http, process, _platform("slack", "ok"))
    output = (tmp_path / "serve.log").read_text()
    assert process.returncode == 0, output
    assert "Traceback" not in output, output
    before, connected, _ = output.partition("slack: connected in Socket Mode")
    assert connected and before.count("slack: Socket Mode cannot connect") == 1, output


async def _until_logged_async(log: Path, text: str, process: subprocess.Popen[str]) -> None:
    async with asyncio.timeout(WAIT):
        while text not in log.read_text(encoding="utf-8"):
            assert process.poll() is None, log.read_text()
            await asyncio.sleep(0.05)  # polling another process's log, with a deadline


def test_migrate_with_the_database_down_is_one_line(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "hermes_chat", "migrate"], cwd=tmp_path,
                            text=True, env=serve_env(**_closed_postgres(tmp_path)),
                            capture_output=True, timeout=WAIT)
    _assert_one_line(result, Exit.DATABASE_UNREACHABLE, "DATABASE_URL: cannot reach postgres")
