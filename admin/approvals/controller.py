"""Tool approvals from the admin API: list those waiting, decide one as an admin, list and
revoke the remembered decisions."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, delete, get, post
from litestar.di import NamedDependency
from litestar.params import JSONBody, Parameter

from admin.approvals.schemas import (
    ApprovalOut,
    ApprovalsOut,
    DecisionIn,
    RulesOut,
    approval_out,
    decided_out,
    rules_out,
)
from admin.openapi import errors
from admin.services import AdminServices
from core.conversation.vocabulary import Policy
from core.errors import Conflict
from core.conversation import approvals

Services = NamedDependency[AdminServices]
ADMIN = "admin"  # who an admin API decision is recorded as: the token holder is an admin
ADMIN_POLICY = Policy.of(admins=[ADMIN])
ApprovalId = Annotated[str, Parameter(min_length=1, max_length=64)]
RuleId = Annotated[int, Parameter(ge=1, le=2**63 - 1)]


class ApprovalController(Controller):
    path = "/api/chat"
    tags = ("approvals",)

    @get("/approvals", summary="Tool approvals waiting for a decision, oldest first",
         responses=errors())
    async def list_approvals(self) -> ApprovalsOut:
        pending = await approvals.pending_approvals()
        return ApprovalsOut([approval_out(run_id, pause) for run_id, pause in pending])

    @post(
        "/approvals/{approval_id:str}/decision", status_code=200,
        summary="Decide on a tool approval as an admin (once, session, always, deny)",
        responses=errors(404, 409, 413, 503, meanings={
            404: "No such approval", 409: "Already decided, or expired"}),
    )
    async def decide(self, services: Services, approval_id: ApprovalId,
                     data: JSONBody[DecisionIn]) -> ApprovalOut:
        pause = await approvals.find_approval(approval_id)
        outcome = await services.runtime.decide(approval_id, data.decision, ADMIN, ADMIN_POLICY)
        if not outcome.accepted:
            raise Conflict(outcome.reason or f"approval {approval_id} cannot be decided any more")
        return decided_out(pause.run_id, outcome)

    @get("/approval-rules", summary="Remembered decisions: per session, and global",
         responses=errors())
    async def list_rules(self) -> RulesOut:
        return rules_out(await approvals.list_rules())

    @delete("/approval-rules/{rule_id:int}", status_code=204,
            summary="Revoke a remembered decision: the next matching command asks again",
            responses=errors(404, meanings={404: "No such remembered decision"}))
    async def revoke_rule(self, rule_id: RuleId) -> None:
        await approvals.revoke(rule_id)
