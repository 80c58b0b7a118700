"""`hermes-chat serve` replicas in child processes, driven as Slack drives them (signed HTTP
events and clicks), and what a test waits for in the database and the fake Slack: the pieces
of the tests that kill replicas, Bridges and `serve` itself (test_*_e2e.py, test_stop_signals.py,
test_bridge_process.py)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from bots.slack import ids
from core.store.models import ChatMessage, ChatMessageLog, ClarifyPause, MessageStatus, Role
from tests.bots.slack.harness import SECRET, button, has_button
from tests.conftest import TEST_CONFIG_YAML
from tests.fakes.llm_server import RequestBody, ScriptedLLM, request_text
from tests.fakes.slack import FakeSlack, Message
from tests.fakes.slack_payloads import (
    CHANNEL_ID,
    event_request,
    interaction_request,
    make_block_action,
    make_slack_event,
)
from tests.faults.bridge_child import BridgeChild
from tests.support.processes import code_path, free_port
from tests.fakes.changes import WAIT

BRIDGE_TOKEN = "e2e-bridge-token"


@dataclass
class Replica:
    """One `hermes-chat serve` process and where it serves."""

    name: str
    process: asyncio.subprocess.Process
    url: str
    log: Path

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")[-6000:]


def _env(tmp_path: Path, **settings: str) -> dict[str, str]:
    unset = ("SLACK_", "DISCORD_", "ADMIN_", "BRIDGE_", "HERMES_", "OPENAI_", "RUN_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(unset)}
    return {**env, "PYTHONPATH": code_path(), "HERMES_HOME": str(tmp_path / "hermes"),
            **settings}


@asynccontextmanager
async def replica(name: str, tmp_path: Path, settings: dict[str, str],
                  new_group: bool = False) -> AsyncIterator[Replica]:
    """A serve process on a free port, healthy; stopped (if still alive) on exit. `new_group`:
    in a process group of its own (as systemd starts it), for a signal to the whole group."""
    port = free_port()
    log = tmp_path / f"{name}.log"
    with log.open("wb") as sink:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "hermes_chat", "serve", cwd=tmp_path,
            env=_env(tmp_path, ADMIN_PORT=str(port), **settings), stdout=sink, stderr=sink,
            start_new_session=new_group,
        )
    running = Replica(name, process, f"http://127.0.0.1:{port}", log)
    try:
        await until(lambda: _healthy(running), f"{name} healthy", running)
        yield running
    finally:
        await interrupted(process)


async def interrupted(process: asyncio.subprocess.Process) -> None:
    """Ctrl-C to a serve still running, as a person stops it; killed if it will not stop."""
    if process.returncode is None:
        process.send_signal(signal.SIGINT)
        try:
            await asyncio.wait_for(process.wait(), WAIT)
        except TimeoutError:
            process.kill()
            await process.wait()


async def _healthy(running: Replica) -> bool:
    assert running.process.returncode is None, running.output()
    try:
        async with httpx.AsyncClient(timeout=2.0) as client:
            return (await client.get(f"{running.url}/api/health")).status_code == 200
    except httpx.TransportError:
        return False


async def until(check: Callable[[], Awaitable[object]], what: str, *replicas: Replica,
                deadline: float = WAIT) -> object:
    """Await `check()` until truthy (returned); on timeout fail with the replicas' logs."""
    end = time.monotonic() + deadline
    while not (value := await check()):
        if time.monotonic() > end:
            logs = "\n".join(f"--- {r.name}\n{r.output()}" for r in replicas)
            raise AssertionError(f"not true within {deadline} s: {what}\n{logs}")
        await asyncio.sleep(0.05)  # polling other processes' effects, with a deadline
    return value


async def resolved(value: object) -> object:
    """`value`, for `until` to check what needs no awaiting."""
    return value


async def started_bridge(tmp_path: Path, name: str) -> BridgeChild:
    """A Bridge child of its own (HERMES_HOME under `tmp_path`), with BRIDGE_TOKEN, started."""
    home = tmp_path / f"bridge-{name}"
    home.mkdir()
    (home / "config.yaml").write_text(TEST_CONFIG_YAML, encoding="utf-8")
    child = BridgeChild(home, token=BRIDGE_TOKEN)
    await child.start()
    return child


def models_file(tmp_path: Path, llm: ScriptedLLM) -> Path:
    path = tmp_path / "models.toml"
    path.write_text(f'[[models]]\nid = "scripted"\nmodel = "{llm.model}"\n'
                    f'base_url = "{llm.base_url}"\ndefault = true\n', encoding="utf-8")
    return path


def about(word: str, answered: bool | None = None) -> Callable[[RequestBody], bool]:
    """A request of the conversation that mentions `word` (before or after a tool answer)."""
    def match(body: RequestBody) -> bool:
        told = any(m.get("role") == "tool" for m in body.get("messages", []))
        return word in request_text(body) and (answered is None or told == answered)
    return match


async def slack_mention(http: httpx.AsyncClient, at: Replica, text: str) -> str:
    # U0ALICE asks, so her clicks (`slack_click`) are the asker's (CONVERSATION_ACTIONS=asker)
    payload = make_slack_event("app_mention", text=text, user="U0ALICE")
    request = event_request(payload, SECRET)
    response = await http.post(f"{at.url}/slack/events", content=request.body,
                               headers=request.headers)
    assert response.status_code == 200, response.text
    return payload["event"]["ts"]


async def slack_click(http: httpx.AsyncClient, at: Replica, message: Message, action_id: str) -> None:
    payload = make_block_action(action_id, button(message, action_id).get("value"),
                                user="U0ALICE", channel=message.channel, message_ts=message.ts,
                                thread_ts=message.thread_ts)
    request = interaction_request(payload, SECRET)
    response = await http.post(f"{at.url}/slack/events", content=request.body,
                               headers=request.headers)
    assert response.status_code == 200, response.text


async def questions_posted() -> int:
    """How many clarify questions and tool approvals have where they were posted stored: a
    Slack ts or a Discord message id (a Slack post marked begun has neither yet)."""
    rows = await ClarifyPause.exclude(platform_refs=None).values_list("platform_refs", flat=True)
    return sum(1 for refs in rows if isinstance(refs, dict) and (
        (refs.get("slack") or {}).get("ts") or (refs.get("discord") or {}).get("message")))


async def assistant_turn(text: str) -> ChatMessage | None:
    """The assistant turn answering the user message `text`."""
    user = await ChatMessage.filter(role=Role.USER, content=text).first()
    if user is None:
        return None
    return await ChatMessage.filter(role=Role.ASSISTANT, parent_id=user.id).first()


async def slack_live_ts(turn: ChatMessage) -> str | None:
    """The ts of a turn's live Slack message, as recorded on its user message."""
    refs = await ChatMessage.filter(id=turn.parent_id).values_list("platform_refs", flat=True)
    return ((refs[0] or {}).get("slack") or {}).get("ts") if refs else None


async def all_shown(texts_: list[str]) -> list[ChatMessage] | None:
    """The three turns, once each one's live Slack message ts is stored (a restart reuses it)."""
    turns = [await assistant_turn(t) for t in texts_]
    for turn in turns:
        if turn is None or not await slack_live_ts(turn):
            return None
    return turns  # type: ignore[return-value]


async def rows_stored(message_ids: list[int]) -> bool:
    for message_id in message_ids:
        if not await ChatMessageLog.filter(message_id=message_id).exists():
            return False
    return True


async def has_status(message_id: int, status: MessageStatus) -> bool:
    return MessageStatus((await ChatMessage.get(id=message_id)).status) == status


async def log_seqs(message_id: int) -> list[int]:
    return await ChatMessageLog.filter(message_id=message_id).order_by("seq").values_list(
        "seq", flat=True)


def clarify_question(slack: FakeSlack, thread: str) -> Message | None:
    found = [m for m in slack.thread(CHANNEL_ID, thread) if m.bot_id
             and has_button(m, ids.CLARIFY_CUSTOM)]
    return found[0] if found else None


def finished_in_slack(slack: FakeSlack, thread: str) -> list[Message]:
    return [m for m in slack.thread(CHANNEL_ID, thread)
            if m.bot_id and has_button(m, ids.REGENERATE)]
