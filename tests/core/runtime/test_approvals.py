"""Tool approvals through the runtime: the real agent loop with `terminal` enabled, a real
Bridge, the database and the scripted LLM. The script asks to `rm -rf` a directory the test
owns; nothing runs before a decision, and only the asker or an admin decides."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from bridge.settings import BridgeSettings
from core.chat import sessions
from core.chat.policy import Policy
from core.errors import AdminOnly, NotFound, NotYours
from core.runtime import approvals
from core.runtime.pool import RunPool
from core.store.models import ApprovalRule, ClarifyPause, MessageStatus, PauseStatus
from hermes_chat.metrics import RuntimeCollector
from tests.bridge.harness import running_bridge
from tests.core.runtime.waiting import finished
from tests.fakes.llm_server import ScriptedLLM, text_reply, tool_reply
from tests.support.approvals import ADMIN, ASKER, OTHER, asked, rm
from tests.support.runtime import catalogue_for, opened_pool

POLICY = Policy.of("anyone", admins=[ADMIN])  # `anyone` does not widen who decides


def pending_figures(pool: RunPool) -> tuple[float | None, float | None]:
    """/metrics' clarify questions and approvals waiting."""
    registry = CollectorRegistry()
    registry.register(RuntimeCollector(pool))
    return (registry.get_sample_value("hermes_clarify_pending"),
            registry.get_sample_value("hermes_approvals_pending"))


async def test_deny_by_the_asker_tells_the_agent_and_others_are_refused(
    runs: RunPool, llm: ScriptedLLM, victim: Path
) -> None:
    llm.script(tool_reply(rm(victim)), text_reply("Left it alone."))
    s = (await sessions.create_session()).id
    run = await runs.start(s, "clean up", author=ASKER)
    update = await asked(runs, run.run_id)
    pending = update.state.pending_approval
    assert pending is not None and pending.command == f"rm -rf {victim}"
    assert pending.tool == "terminal" and pending.choices == ("once", "session", "always", "deny")
    assert update.approval.question == pending.command and victim.exists()
    assert update.pause is None  # never shown (nor answerable) as a clarify question
    assert pending_figures(runs) == (0.0, 1.0)
    with pytest.raises(NotFound):
        await runs.answer(update.approval.clarify_id, "once", ASKER)
    assert len(llm.requests) == 1  # nothing runs, nothing goes on, without a decision

    with pytest.raises(NotYours):
        await runs.decide(update.approval.clarify_id, "once", OTHER, POLICY)
    with pytest.raises(AdminOnly):
        await runs.decide(update.approval.clarify_id, "always", ASKER, POLICY)
    outcome = await runs.decide(update.approval.clarify_id, "deny", ASKER, POLICY)
    late = await runs.decide(update.approval.clarify_id, "once", ADMIN, POLICY)
    done = await finished(runs, run.run_id)

    assert outcome.accepted and not late.accepted
    assert done.status == MessageStatus.SUCCESS and victim.exists()
    assert "BLOCKED" in llm.requests[-1]["messages"][-1]["content"]
    pause = await ClarifyPause.get(clarify_id=update.approval.clarify_id)
    assert (pause.status, pause.answer, pause.answered_by) == (PauseStatus.ANSWERED, "deny", ASKER)


async def test_allow_once_runs_once_and_the_next_request_asks_again(
    runs: RunPool, llm: ScriptedLLM, victim: Path
) -> None:
    llm.script(tool_reply(rm(victim)), tool_reply(rm(victim)), text_reply("done"))
    s = (await sessions.create_session()).id
    run = await runs.start(s, "clean up twice", author=ASKER)
    first = await asked(runs, run.run_id)
    await runs.decide(first.approval.clarify_id, "once", ASKER, POLICY)
    second = await asked(runs, run.run_id, after=first.approval.clarify_id)
    assert not victim.exists()
    victim.mkdir()
    await runs.decide(second.approval.clarify_id, "deny", ADMIN, POLICY)
    assert (await finished(runs, run.run_id)).status == MessageStatus.SUCCESS
    assert victim.exists()
    assert await ApprovalRule.all().count() == 0  # "once" is not remembered


async def test_allow_in_this_conversation_is_remembered_and_revocable(
    runs: RunPool, llm: ScriptedLLM, victim: Path
) -> None:
    s = (await sessions.create_session()).id
    llm.script(tool_reply(rm(victim)), text_reply("gone"))
    run = await runs.start(s, "clean up", author=ASKER)
    update = await asked(runs, run.run_id)
    await runs.decide(update.approval.clarify_id, "session", ASKER, POLICY)
    await finished(runs, run.run_id)
    [rule] = await approvals.list_rules()
    assert (rule.session_id, rule.decided_by) == (s, ASKER)

    victim.mkdir()
    llm.script(tool_reply(rm(victim)), text_reply("gone again"))
    again = await finished(runs, (await runs.start(s, "once more", author=ASKER)).run_id)
    assert again.status == MessageStatus.SUCCESS and not victim.exists()  # not asked

    other = (await sessions.create_session()).id  # another conversation still asks
    victim.mkdir()
    llm.script(tool_reply(rm(victim)), text_reply("kept"))
    elsewhere = await runs.start(other, "clean up", author=ASKER)
    await runs.decide((await asked(runs, elsewhere.run_id)).approval.clarify_id, "deny", ASKER,
                      POLICY)
    await finished(runs, elsewhere.run_id)

    await approvals.revoke(rule.rule_id)
    llm.script(tool_reply(rm(victim)), text_reply("kept"))
    revoked = await runs.start(s, "and again", author=ASKER)
    await runs.decide((await asked(runs, revoked.run_id)).approval.clarify_id, "deny", ASKER,
                      POLICY)
    await finished(runs, revoked.run_id)
    assert victim.exists()


async def test_always_allow_by_an_admin_applies_everywhere(
    runs: RunPool, llm: ScriptedLLM, victim: Path
) -> None:
    llm.script(tool_reply(rm(victim)), text_reply("gone"))
    run = await runs.start((await sessions.create_session()).id, "clean up", author=ASKER)
    await runs.decide((await asked(runs, run.run_id)).approval.clarify_id, "always", ADMIN, POLICY)
    await finished(runs, run.run_id)
    victim.mkdir()
    llm.script(tool_reply(rm(victim)), text_reply("gone"))
    other = await runs.start((await sessions.create_session()).id, "clean up", author=OTHER)
    assert (await finished(runs, other.run_id)).status == MessageStatus.SUCCESS
    assert not victim.exists()
    [rule] = await approvals.list_rules()
    assert rule.session_id is None and rule.decided_by == ADMIN


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_a_decision_after_the_bridge_restarted_is_applied_by_the_next_one(
    db: str, terminal_settings: BridgeSettings, llm: ScriptedLLM, skills_dir: Path,
    victim: Path,
) -> None:
    """The Bridge that asked is gone: the pause stays, the decision is stored, and the Bridge
    that answers next runs the asking step again and applies it without asking."""
    port = _free_port()
    llm.script(tool_reply(rm(victim)), tool_reply(rm(victim)), text_reply("gone"))
    async with opened_pool(f"http://127.0.0.1:{port}", catalogue_for(llm, skills_dir)) as pool:
        async with running_bridge(terminal_settings, port=port):
            run = await pool.start((await sessions.create_session()).id, "clean up",
                                   author=ASKER)
            update = await asked(pool, run.run_id)
        assert victim.exists()  # that Bridge stopped: nothing ran
        async with running_bridge(terminal_settings, port=port):
            outcome = await pool.decide(update.approval.clarify_id, "once", ASKER, POLICY)
            assert outcome.accepted
            done = await finished(pool, run.run_id)
    assert done.status == MessageStatus.SUCCESS and not victim.exists()
    assert len([r for r in llm.requests if r["messages"][-1]["role"] == "user"]) == 2
