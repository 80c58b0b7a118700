"""The admin API's tool approvals: list those waiting, decide one as an admin, list and revoke
the remembered decisions (a real Bridge with `terminal`, the scripted LLM, the database)."""

from __future__ import annotations

from pathlib import Path

import httpx

from core.chat import sessions
from core.runtime.pool import RunPool
from core.store.models import MessageStatus
from tests.admin.conftest import AUTH, admin_on
from tests.bridge.harness import RunningBridge
from tests.core.runtime.waiting import finished
from tests.fakes.llm_server import ScriptedLLM, text_reply, tool_reply
from tests.support.approvals import ASKER, asked, rm
from tests.support.runtime import opened_pool


async def test_an_admin_lists_decides_and_revokes(
    runs: RunPool, llm: ScriptedLLM, victim: Path
) -> None:
    llm.script(tool_reply(rm(victim)), text_reply("gone"))
    run = await runs.start((await sessions.create_session()).id, "clean up", author=ASKER)
    update = await asked(runs, run.run_id)
    approval_id = update.approval.clarify_id
    async with admin_on(runs) as url, httpx.AsyncClient(base_url=url, headers=AUTH) as api:
        listed = (await api.get("/api/chat/approvals")).json()["items"]
        assert [(a["approvalId"], a["runId"], a["tool"], a["command"], a["status"])
                for a in listed] == [(approval_id, run.run_id, "terminal", f"rm -rf {victim}",
                                      "UNANSWERED")]
        state = (await api.get(f"/api/chat/runs/{run.run_id}/state")).json()
        assert state["pendingClarify"] is None
        assert state["thinking"]["pendingApproval"]["approvalId"] == approval_id
        assert state["thinking"]["pendingApproval"]["command"] == f"rm -rf {victim}"
        bad = await api.post(f"/api/chat/approvals/{approval_id}/decision",
                             json={"decision": "maybe"})
        assert bad.status_code == 400 and bad.json()["code"] == "invalid_input"
        unknown = await api.post("/api/chat/approvals/apr-nope/decision",
                                 json={"decision": "once"})
        assert unknown.status_code == 404 and unknown.json()["code"] == "not_found"

        decided = await api.post(f"/api/chat/approvals/{approval_id}/decision",
                                 json={"decision": "always"})
        assert decided.status_code == 200, decided.text
        assert (decided.json()["decision"], decided.json()["decidedBy"]) == ("always", "admin")
        again = await api.post(f"/api/chat/approvals/{approval_id}/decision",
                               json={"decision": "deny"})
        assert again.status_code == 409 and again.json()["code"] == "conflict"
        assert (await finished(runs, run.run_id)).status == MessageStatus.SUCCESS
        assert not victim.exists()
        assert (await api.get("/api/chat/approvals")).json()["items"] == []

        [rule] = (await api.get("/api/chat/approval-rules")).json()["items"]
        assert rule["sessionId"] is None and rule["patternKey"] == update.approval.reason
        revoked = await api.delete(f"/api/chat/approval-rules/{rule['ruleId']}")
        assert revoked.status_code == 204
        gone = await api.delete(f"/api/chat/approval-rules/{rule['ruleId']}")
        assert gone.status_code == 404 and gone.json()["code"] == "not_found"
        assert (await api.get("/api/chat/approval-rules")).json()["items"] == []


async def test_a_run_waiting_on_an_approval_has_no_clarify_pending_on_any_replica(
    runs: RunPool, llm: ScriptedLLM, victim: Path, terminal_bridge: RunningBridge
) -> None:
    """Read from the database (another process drives the run), an approval is no clarify
    question: `pendingClarify` stays null there too, as on the replica that drives it."""
    llm.script(tool_reply(rm(victim)), text_reply("gone"))
    run = await runs.start((await sessions.create_session()).id, "clean up", author=ASKER)
    await asked(runs, run.run_id)
    async with opened_pool(terminal_bridge.url, runs.catalogue) as elsewhere, \
            admin_on(elsewhere) as url, httpx.AsyncClient(base_url=url, headers=AUTH) as api:
        assert elsewhere.view(run.run_id) is None  # this one reads the database
        state = (await api.get(f"/api/chat/runs/{run.run_id}/state")).json()
    assert state["pendingClarify"] is None, state
