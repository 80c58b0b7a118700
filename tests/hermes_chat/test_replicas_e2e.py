"""kill -9 of a replica with three runs in flight, one waiting on clarify (issue 8 §4).

Two `hermes-chat serve` processes on one PostgreSQL database, one external real Bridge (in this
process, its agent calling the scripted LLM), the fake Slack. Three conversations start on
replica A; A is killed with SIGKILL; replica B, already running, takes over all three once
A's 2-second leases expire, finishes the two streaming runs, and takes the clarify click.
And kill -9 of the replica running the upkeep jobs: the other one runs them within a lease
(issue 16 §4).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from bots.slack import ids
from core import sessions
from core.models import (
    ChatMessage,
    ChatMessageLog,
    ClarifyPause,
    MessageStatus,
    PauseStatus,
    RunLease,
    Role,
    utc_now,
)
from core.runtime import records
from tests.bots.slack.harness import SECRET, button, has_button, texts
from tests.bridge.harness import RunningBridge
from tests.conftest import BACKEND
from tests.fakes.llm_server import (
    RequestBody,
    ScriptedLLM,
    ToolCall,
    request_text,
    text_reply,
    tool_reply,
)
from tests.fakes.slack import FakeSlack, Message
from tests.fakes.slack_payloads import (
    CHANNEL_ID,
    event_request,
    interaction_request,
    make_block_action,
    make_slack_event,
)
from tests.hermes_chat.test_serve import _free_port, code_path

pytestmark = pytest.mark.skipif(
    BACKEND != "postgres",
    reason="several replicas share PostgreSQL; on SQLite a second replica is refused by design",
)
DEADLINE = 60.0  # two service processes and the Bridge share two cores with other tests
LEASE_SECONDS = 2
TAKEOVER_DEADLINE = 10.0  # lease expiry (<= 2 s after the kill) + a scan (every 1 s), generously
STORIES = {
    "story one": ("Once upon a time a lighthouse keeper counted ships. " * 6).strip(),
    "story two": ("Far away a baker taught a river to sing at dawn. " * 6).strip(),
}
QUESTION = {"question": "Which colour?", "choices": ["red", "blue"]}


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
    port = _free_port()
    log = tmp_path / f"{name}.log"
    with log.open("wb") as sink:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "hermes_chat", "serve", cwd=tmp_path,
            env=_env(tmp_path, ADMIN_PORT=str(port), **settings), stdout=sink, stderr=sink,
            start_new_session=new_group,
        )
    running = Replica(name, process, f"http://127.0.0.1:{port}", log)
    try:
        await _until(lambda: _healthy(running), f"{name} healthy", running)
        yield running
    finally:
        await interrupted(process)


async def interrupted(process: asyncio.subprocess.Process) -> None:
    """Ctrl-C to a serve still running, as a person stops it; killed if it will not stop."""
    if process.returncode is None:
        process.send_signal(signal.SIGINT)
        try:
            await asyncio.wait_for(process.wait(), DEADLINE)
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


async def _until(check: Callable[[], Awaitable[object]], what: str, *replicas: Replica,
                 deadline: float = DEADLINE) -> object:
    """Await `check()` until truthy (returned); on timeout fail with the replicas' logs."""
    end = time.monotonic() + deadline
    while not (value := await check()):
        if time.monotonic() > end:
            logs = "\n".join(f"--- {r.name}\n{r.output()}" for r in replicas)
            raise AssertionError(f"not true within {deadline} s: {what}\n{logs}")
        await asyncio.sleep(0.05)  # polling other processes' effects, with a deadline
    return value


def _models_file(tmp_path: Path, llm: ScriptedLLM) -> Path:
    path = tmp_path / "models.toml"
    path.write_text(f'[[models]]\nid = "scripted"\nmodel = "{llm.model}"\n'
                    f'base_url = "{llm.base_url}"\ndefault = true\n', encoding="utf-8")
    return path


def _about(word: str, answered: bool | None = None) -> Callable[[RequestBody], bool]:
    """A request of the conversation that mentions `word` (before or after a tool answer)."""
    def match(body: RequestBody) -> bool:
        told = any(m.get("role") == "tool" for m in body.get("messages", []))
        return word in request_text(body) and (answered is None or told == answered)
    return match


async def _mention(http: httpx.AsyncClient, at: Replica, text: str) -> str:
    # U0ALICE asks, so her clicks (`_click`) are the asker's (CONVERSATION_ACTIONS=asker)
    payload = make_slack_event("app_mention", text=text, user="U0ALICE")
    request = event_request(payload, SECRET)
    response = await http.post(f"{at.url}/slack/events", content=request.body,
                               headers=request.headers)
    assert response.status_code == 200, response.text
    return payload["event"]["ts"]


async def _click(http: httpx.AsyncClient, at: Replica, message: Message, action_id: str) -> None:
    payload = make_block_action(action_id, button(message, action_id).get("value"),
                                user="U0ALICE", channel=message.channel, message_ts=message.ts,
                                thread_ts=message.thread_ts)
    request = interaction_request(payload, SECRET)
    response = await http.post(f"{at.url}/slack/events", content=request.body,
                               headers=request.headers)
    assert response.status_code == 200, response.text


async def _assistant(text: str) -> ChatMessage | None:
    """The assistant turn answering the user message `text`."""
    user = await ChatMessage.filter(role=Role.USER, content=text).first()
    if user is None:
        return None
    return await ChatMessage.filter(role=Role.ASSISTANT, parent_id=user.id).first()


async def _all_shown(texts_: list[str]) -> list[ChatMessage] | None:
    """The three turns, once each one's live Slack message ts is stored (a restart reuses it)."""
    turns = [await _assistant(t) for t in texts_]
    if any(t is None or not ((t.platform_refs or {}).get("slack") or {}).get("ts") for t in turns):
        return None
    return turns  # type: ignore[return-value]


async def _rows_stored(message_ids: list[int]) -> bool:
    for message_id in message_ids:
        if not await ChatMessageLog.filter(message_id=message_id).exists():
            return False
    return True


async def _status(message_id: int) -> MessageStatus:
    return MessageStatus((await ChatMessage.get(id=message_id)).status)


async def _seqs(message_id: int) -> list[int]:
    return await ChatMessageLog.filter(message_id=message_id).order_by("seq").values_list(
        "seq", flat=True)


async def _owners(run_ids: list[str]) -> set[str]:
    return set(await RunLease.filter(run_id__in=run_ids).values_list("owner", flat=True))


def _question(slack: FakeSlack, thread: str) -> Message | None:
    found = [m for m in slack.thread(CHANNEL_ID, thread) if m.bot_id
             and has_button(m, ids.CLARIFY_CUSTOM)]
    return found[0] if found else None


def _finished_in_slack(slack: FakeSlack, thread: str) -> list[Message]:
    return [m for m in slack.thread(CHANNEL_ID, thread)
            if m.bot_id and has_button(m, ids.REGENERATE)]


async def test_kill_9_of_a_replica_with_three_runs_one_on_clarify(
    db: str, bridge: RunningBridge, llm: ScriptedLLM, tmp_path: Path
) -> None:
    gates = {text: asyncio.Event() for text in STORIES}
    llm.script(*(text_reply(story, gate=gates[text], chunk_size=20, match=_about(text))
                 for text, story in STORIES.items()),
               tool_reply(ToolCall("clarify", QUESTION), match=_about("paint", answered=False)),
               text_reply("Blue it is.", match=_about("paint", answered=True)))
    (tmp_path / "skills").mkdir()
    async with FakeSlack(bot_token="xoxb-test") as slack:
        settings = {
            "DATABASE_URL": db, "HERMES_BRIDGE_URL": bridge.url,
            "MODELS_FILE": str(_models_file(tmp_path, llm)), "SKILLS_DIR": str(tmp_path / "skills"),
            "SLACK_BOT_TOKEN": "xoxb-test", "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": slack.api_url, "RUN_LEASE_SECONDS": str(LEASE_SECONDS),
        }
        async with replica("A", tmp_path, settings) as a, replica("B", tmp_path, settings) as b, \
                httpx.AsyncClient(timeout=DEADLINE) as http:
            asked = ["story one", "story two", "paint the shed"]
            threads = [await _mention(http, a, text) for text in asked]
            turns: list[ChatMessage] = await _until(lambda: _all_shown(asked), "live messages", a)
            ids_ = [t.id for t in turns]
            runs = [t.run_id for t in turns]
            await _until(lambda: ClarifyPause.exclude(platform_refs=None).exists(),
                         "the question posted and its ts stored", a)
            await _until(lambda: _rows_stored(ids_[:2]), "streamed rows stored", a)
            [owner_a] = await _owners(runs)  # A drives all three
            question = _question(slack, threads[2])
            assert question is not None

            a.process.kill()  # SIGKILL: no clean-up of any kind
            await a.process.wait()
            killed = time.monotonic()
            owners = await _until(lambda: _taken_over(runs, owner_a), "B owns all three", b,
                                  deadline=TAKEOVER_DEADLINE)
            takeover = time.monotonic() - killed
            print(f"B took over A's three runs {takeover:.2f} s after the kill")

            for gate in gates.values():
                gate.set()
            for message_id in ids_[:2]:
                await _until(lambda: _is(message_id, MessageStatus.SUCCESS), "stories done", b)
            await _click(http, b, question, ids.choice_action(1))  # the click lands on B
            await _until(lambda: _is(ids_[2], MessageStatus.SUCCESS), "answered run done", b)
            for thread in threads:
                await _until(lambda: _async(_finished_in_slack(slack, thread)),
                             "answers shown in Slack", b)
            await _until(lambda: _async("answered by <@U0ALICE>: blue" in texts(
                slack.message(CHANNEL_ID, question.ts))), "the question shows its answer", b)

    assert len(owners) == 1 and owners != {owner_a}
    assert takeover < TAKEOVER_DEADLINE, takeover
    for turn, text in zip(turns[:2], STORIES, strict=True):
        assert (await ChatMessage.get(id=turn.id)).content == STORIES[text]
    assert (await ChatMessage.get(id=ids_[2])).content == "Blue it is."
    for message_id in ids_:
        seqs = await _seqs(message_id)
        assert seqs == list(range(1, len(seqs) + 1)), seqs  # every row exactly once, no gap
        assert await ChatMessageLog.filter(message_id=message_id, kind="done").count() == 1
    for thread, turn in zip(threads, turns, strict=True):
        bot = [m for m in slack.thread(CHANNEL_ID, thread) if m.bot_id]
        live_ts = turn.platform_refs["slack"]["ts"]
        assert [m.ts for m in _finished_in_slack(slack, thread)] == [live_ts]  # the same message
        assert len(bot) == (2 if thread == threads[2] else 1)  # plus the question, once
    assert await RunLease.filter(run_id__in=runs).count() == 0  # released as each finished


async def _taken_over(runs: list[str], dead: str) -> set[str] | None:
    owners = await _owners(runs)
    rows = await RunLease.filter(run_id__in=runs).count()
    return owners if rows == len(runs) and dead not in owners else None


async def _is(message_id: int, status: MessageStatus) -> bool:
    return await _status(message_id) == status


async def _async(value: object) -> object:
    return value


HANDOVER_LEASE = 4  # seconds; each replica tries the scheduler lock every half lease


async def test_kill_9_of_the_scheduler_leader_hands_the_jobs_to_the_other_replica_in_a_lease(
    db: str, bridge: RunningBridge, llm: ScriptedLLM, tmp_path: Path
) -> None:
    (tmp_path / "skills").mkdir()
    settings = {
        "DATABASE_URL": db, "HERMES_BRIDGE_URL": bridge.url,
        "MODELS_FILE": str(_models_file(tmp_path, llm)), "SKILLS_DIR": str(tmp_path / "skills"),
        "RUN_LEASE_SECONDS": str(HANDOVER_LEASE),
    }
    async with replica("A", tmp_path, settings) as a:
        await _until(lambda: _async("this replica runs the upkeep jobs" in a.output()),
                     "A leads", a)
        async with replica("B", tmp_path, settings) as b:
            assert "another replica runs the upkeep jobs" in b.output()
            # A question older than the retention, stored after A's jobs ran at its start:
            # A would expire it in an hour; whoever runs the jobs next expires it at once.
            pause = await _ancient_pause()
            a.process.kill()  # SIGKILL: no clean-up of any kind
            await a.process.wait()
            killed = time.monotonic()
            await _until(lambda: _is_expired(pause), "B ran the upkeep jobs", a, b,
                         deadline=HANDOVER_LEASE)
            handover = time.monotonic() - killed
            print(f"B ran the upkeep jobs {handover:.2f} s after the leader's kill -9")
            assert "this replica runs the upkeep jobs from now on" in b.output()
    assert handover < HANDOVER_LEASE


async def _ancient_pause() -> int:
    session = (await sessions.create_session()).id
    turn = await records.insert_turn(session, "run-ancient", MessageStatus.SUCCESS, text="?")
    pause = await ClarifyPause.create(run_id="run-ancient", message_id=turn.assistant.id,
                                      clarify_id="ancient", question="?",
                                      created_at=utc_now() - timedelta(days=31))
    return pause.id


async def _is_expired(pause_id: int) -> bool:
    return await ClarifyPause.filter(id=pause_id, status=PauseStatus.EXPIRED).exists()
