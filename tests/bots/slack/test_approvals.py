"""Tool approvals in Slack: the real agent loop with `terminal` enabled on a real Bridge, the
scripted LLM asking to `rm -rf` a directory the test owns; the approval message, its buttons,
who may decide, and the buttons after a restart of `serve`."""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bots.slack import ids
from bots.slack.render.approval import MAX_COMMAND, render_approval
from core.conversation.refusals import ADMIN_ONLY
from core.runtime.pool import RunPool
from core.runtime.recovery import recover
from core.runtime.updates import PauseView
from core.store.models import ClarifyPause, PauseKind, PauseStatus
from tests.bots.slack.clocks import FastClock
from tests.bots.slack.harness import Harness, buttons, has_button, restartable, running, texts, until
from tests.bridge.harness import RunningBridge
from tests.fakes.llm_server import ScriptedLLM, text_reply, tool_reply
from tests.fakes.slack import FakeSlack, Message
from tests.fakes.slack_payloads import CHANNEL_ID
from tests.support.approvals import rm
from tests.support.replicas import questions_posted
from tests.support.runtime import catalogue_for

ASKER, ADMIN, OTHER = "U0ALICE", "U0BOB", "U0EVE"
ONCE, SESSION, ALWAYS, DENY = (ids.approval_action(d) for d in ("once", "session", "always", "deny"))


@pytest.fixture
def pool(runs: RunPool) -> RunPool:
    """The Slack harness's pool is tests/support/approvals.py's, on the Bridge that runs commands."""
    return runs


@pytest.fixture
async def admin_h(fake_slack: FakeSlack, pool: RunPool, fast_clock: FastClock) -> AsyncIterator[Harness]:
    """U0BOB is a chat admin; CONVERSATION_ACTIONS=anyone does not let U0EVE decide."""
    async with running(fake_slack, pool, fast_clock, chat_admins=(ADMIN,),
                       conversation_actions="anyone") as harness:
        yield harness


async def asked(h: Harness, thread: str) -> Message:
    """The approval's message, once posted with its buttons."""
    found = await until(lambda: [m for m in h.bot_messages(CHANNEL_ID, thread) if has_button(m, DENY)])
    return found[0]


async def approval() -> ClarifyPause:
    return await ClarifyPause.get(kind=PauseKind.APPROVAL)


async def asking(h: Harness, llm: ScriptedLLM, victim: Path, reply: str) -> tuple[str, Message]:
    """ASKER's turn, whose agent asks to remove `victim` then says `reply`; its thread and
    the approval's message."""
    llm.script(tool_reply(rm(victim)), text_reply(reply))
    thread = (await h.event("app_mention", text="clean up", user=ASKER))["ts"]
    return thread, await asked(h, thread)


def tool_result(llm: ScriptedLLM) -> str:
    return json.dumps(llm.requests[-1]["messages"][-1])


async def test_others_are_refused_and_the_askers_deny_reaches_the_agent(
    admin_h: Harness, llm: ScriptedLLM, victim: Path
) -> None:
    h = admin_h
    thread, message = await asking(h, llm, victim, "Left it alone.")
    assert f"```rm -rf {victim}```" in texts(message) and "`terminal`" in texts(message)
    assert [b["text"]["text"] for b in buttons(message)] == [
        "Allow once", "Allow in this conversation", "Always allow", "Deny"]

    await h.click(message, ONCE, user=OTHER)  # anyone may act on the turn, not decide
    await until(lambda: any(f"<@{ASKER}>" in t for t in h.ephemerals(OTHER)))
    await h.click(message, ALWAYS, user=ASKER)  # the asker, but not an admin
    await until(lambda: ADMIN_ONLY in h.ephemerals(ASKER))
    pause = await approval()
    assert pause.status == PauseStatus.UNANSWERED and pause.answer is None and victim.exists()

    await h.click(message, DENY, user=ASKER)
    [done] = await h.answered(CHANNEL_ID, thread)
    assert "Left it alone." in texts(done) and victim.exists()
    assert "deny" in tool_result(llm).lower() or "denied" in tool_result(llm).lower()
    pause = await approval()
    assert (pause.status, pause.answer, pause.answered_by) == (PauseStatus.ANSWERED, "deny", ASKER)
    shown = await until(lambda: (m := h.slack.message(CHANNEL_ID, message.ts))
                        and f"⛔ Denied by <@{ASKER}>" in texts(m) and m)
    assert not has_button(shown, DENY) and not has_button(shown, ONCE)


async def test_an_admins_allow_once_runs_it_and_a_second_click_changes_nothing(
    admin_h: Harness, llm: ScriptedLLM, victim: Path
) -> None:
    h = admin_h
    thread, message = await asking(h, llm, victim, "Cleaned.")
    stale = copy.deepcopy(message)  # as a client that has not seen the edit yet shows it
    await h.click(message, ONCE, user=ADMIN)
    [done] = await h.answered(CHANNEL_ID, thread)
    assert "Cleaned." in texts(done) and not victim.exists()
    pause = await approval()
    assert (pause.status, pause.answer, pause.answered_by) == (PauseStatus.ANSWERED, "once", ADMIN)
    await until(lambda: f"✅ Allowed once by <@{ADMIN}>" in texts(h.slack.message(CHANNEL_ID, message.ts)))

    await h.click(stale, DENY, user=ASKER)
    await until(lambda: any("already" in t for t in h.ephemerals(ASKER)))
    assert (await approval()).answer == "once"


async def test_the_approval_of_a_stopped_run_says_it_expired_and_runs_nothing(
    admin_h: Harness, llm: ScriptedLLM, victim: Path
) -> None:
    h = admin_h
    thread, message = await asking(h, llm, victim, "never")
    stale = copy.deepcopy(message)
    await h.pool.stop(h.pool.active()[0].run_id)
    await until(lambda: "⌛ Expired" in texts(h.slack.message(CHANNEL_ID, message.ts)))
    assert not has_button(h.slack.message(CHANNEL_ID, message.ts), ONCE)
    await h.click(stale, ONCE, user=ASKER)
    await until(lambda: any("expired" in t for t in h.ephemerals(ASKER)))
    pause = await approval()
    assert pause.status == PauseStatus.EXPIRED and pause.answer is None and victim.exists()


async def test_a_button_works_after_a_restart(
    db: str, terminal_bridge: RunningBridge, llm: ScriptedLLM, skills_dir: Path,
    fake_slack: FakeSlack, fast_clock: FastClock, victim: Path,
) -> None:
    llm.script(tool_reply(rm(victim)), text_reply("Cleaned, after the restart."))
    catalogue = catalogue_for(llm, skills_dir)
    async with restartable(terminal_bridge.url, catalogue, fake_slack, fast_clock) as serve:
        async with serve() as h:
            thread = (await h.event("app_mention", text="clean up"))["ts"]
            message = await asked(h, thread)
            # the ts is stored once the post returns; a restart reuses it
            await until(questions_posted)
        async with serve() as h2:
            assert await recover(h2.pool) == 1
            await h2.click(message, ONCE)
            [done] = await h2.answered(CHANNEL_ID, thread)
            await until(lambda: "✅ Allowed once by <@U0USER>"
                        in texts(h2.slack.message(CHANNEL_ID, message.ts)))
    assert "Cleaned, after the restart." in texts(done) and not victim.exists()


def test_the_command_cannot_break_its_code_block() -> None:
    command = "echo ```*bold* <!channel>``` && rm -rf /tmp/x " + "a" * 5000
    pause = PauseView(1, "a1", command, ("once", "deny"), PauseStatus.UNANSWERED,
                      kind=PauseKind.APPROVAL, tool="term`inal", reason="recursive delete")
    blocks = render_approval(pause).blocks
    code = blocks[1]["text"]["text"]
    assert code.startswith("```") and code.endswith("…```") and len(code) <= MAX_COMMAND
    assert code.count("```") == 2 and "&lt;!channel&gt;" in code
    assert "recursive delete" in blocks[0]["text"]["text"] and "`term'inal`" in blocks[0]["text"]["text"]
    assert [b["text"]["text"] for b in blocks[2]["elements"]] == ["Allow once", "Deny"]
