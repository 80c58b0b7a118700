"""Bodies of the approval routes."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import msgspec

from core.conversation.approvals import RuleView
from core.conversation.vocabulary import ClarifyOutcome, PauseView

Decision = Literal["once", "session", "always", "deny"]


class DecisionIn(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    """An admin's decision on a tool approval; the first decision wins."""

    decision: Decision


class ApprovalOut(msgspec.Struct, frozen=True, rename="camel"):
    """A tool call waiting for (or having had) a decision; `command` is cut to 3000 chars."""

    approval_id: str
    run_id: str
    tool: str | None
    command: str
    reason: str | None
    choices: list[str]
    status: str
    decision: str | None
    decided_by: str | None


class ApprovalsOut(msgspec.Struct, frozen=True, rename="camel"):
    items: list[ApprovalOut]


class RuleOut(msgspec.Struct, frozen=True, rename="camel"):
    """A remembered decision: `sessionId` null is global ("Always allow")."""

    rule_id: int
    pattern_key: str
    session_id: int | None
    decided_by: str | None
    created_at: datetime


class RulesOut(msgspec.Struct, frozen=True, rename="camel"):
    items: list[RuleOut]


def approval_out(run_id: str, pause: PauseView) -> ApprovalOut:
    return ApprovalOut(pause.clarify_id, run_id, pause.tool, pause.question, pause.reason,
                       list(pause.choices), pause.status.value, pause.answer, pause.answered_by)


def decided_out(run_id: str, outcome: ClarifyOutcome) -> ApprovalOut:
    return approval_out(run_id, outcome.pause)


def rules_out(rules: list[RuleView]) -> RulesOut:
    return RulesOut([RuleOut(r.rule_id, r.pattern_key, r.session_id, r.decided_by, r.created_at)
                     for r in rules])
