"""Tool approvals: a tool call hermes-agent flagged as dangerous, paused like a clarify (a
`clarify_pause` row of kind `approval`: persisted before anyone sees it, first decision wins,
no limit but the clarify fallback), and the decisions remembered for later commands.

Who decides is `Policy.check_approve`: the asker or a chat admin, and "always" an admin only.
"Allow in this conversation" (`session`) and "Always allow" (`always`) are remembered as
`approval_rule` rows of hermes-agent's pattern key (per session, or global); every run sends
the patterns that apply to it (`approved_patterns`) so the Bridge does not ask about them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from tortoise.exceptions import IntegrityError
from tortoise.expressions import Q

from core.agent.bridge.port import Bridge
from core.agent.events import ApprovalRequest
from core.agent.thinking import COMMAND_LIMIT, REASON_LIMIT, TOOL_LIMIT
from core.chat.policy import Policy, asker_of_pause, settings_of_message
from core.errors import InvalidInput, NotFound
from core.runtime.clarify import ClarifyOutcome, answer_pause, view
from core.runtime.updates import PauseView
from core.store.models import ApprovalRule, ChatMessage, ClarifyPause, PauseKind, PauseStatus
from core.text.safe_text import bounded

DECISIONS = ("once", "session", "always", "deny")
PATTERN_LIMIT = 500  # approval_rule.pattern_key


@dataclass(frozen=True, slots=True)
class RuleView:
    """A remembered decision: `session_id` None is global ("Always allow")."""

    rule_id: int
    pattern_key: str
    session_id: int | None
    decided_by: str | None
    created_at: datetime


async def persist_approval(run_id: str, message_id: int, event: ApprovalRequest) -> PauseView:
    """Store the question, its texts bounded (idempotent on approval_id, like a clarify)."""
    try:
        pause = await ClarifyPause.create(
            run_id=run_id, message_id=message_id, clarify_id=event.approval_id,
            kind=PauseKind.APPROVAL, question=bounded(event.command, COMMAND_LIMIT),
            choices=[c for c in event.choices if c in DECISIONS],
            tool=bounded(event.tool, TOOL_LIMIT), reason=bounded(event.reason, REASON_LIMIT),
            pattern_key=bounded(event.pattern_key, PATTERN_LIMIT) or None,
        )
    except IntegrityError:
        pause = await ClarifyPause.get(clarify_id=event.approval_id)
    return view(pause)


async def find_approval(approval_id: str | None = None, pause_id: int | None = None) -> ClarifyPause:
    """An approval pause by its approval id or row id; NotFound otherwise."""
    query = {"clarify_id": approval_id} if approval_id is not None else {"id": pause_id}
    pause = await ClarifyPause.get_or_none(kind=PauseKind.APPROVAL, **query)
    if pause is None:
        raise NotFound(f"no tool approval {approval_id or pause_id}")
    return pause


async def decide(bridge: Bridge, policy: Policy, pause: ClarifyPause, decision: str,
                 user: str) -> ClarifyOutcome:
    """`user` decides (refused by the policy unless allowed); the first decision wins, and a
    remembered one is stored once it is accepted."""
    if decision not in (pause.choices or DECISIONS):
        raise InvalidInput(f"decision must be one of {', '.join(pause.choices or DECISIONS)}")
    channel = await settings_of_message(pause.message_id)
    policy.in_channel(channel).check_approve(user, await asker_of_pause(pause.id), decision)
    outcome = await answer_pause(
        bridge, pause, decision, user,
        wake=lambda: bridge.answer_approval(pause.run_id, pause.clarify_id, decision))
    if outcome.accepted and decision in ("session", "always") and pause.pattern_key:
        session_id = None if decision == "always" else await _session_of(pause)
        await remember(pause.pattern_key, session_id, user)
    return outcome


async def remember(pattern_key: str, session_id: int | None, user: str | None) -> RuleView:
    """Allow `pattern_key` in one session (or everywhere, `session_id` None), once."""
    rule = await ApprovalRule.get_or_none(pattern_key=pattern_key, session_id=session_id)
    if rule is None:
        try:
            rule = await ApprovalRule.create(pattern_key=pattern_key, session_id=session_id,
                                             decided_by=user)
        except IntegrityError:
            rule = await ApprovalRule.get(pattern_key=pattern_key, session_id=session_id)
    return _rule_view(rule)


async def approved_patterns(session_id: int) -> tuple[str, ...]:
    """The pattern keys a run of this session may run without asking."""
    keys = await ApprovalRule.filter(Q(session_id=session_id) | Q(session_id=None)) \
        .order_by("id").values_list("pattern_key", flat=True)
    return tuple(dict.fromkeys(str(k) for k in keys))


async def list_rules(session_id: int | None = None) -> list[RuleView]:
    """Every remembered decision (of one session and the global ones, if given)."""
    query = ApprovalRule.all() if session_id is None else ApprovalRule.filter(
        Q(session_id=session_id) | Q(session_id=None))
    return [_rule_view(rule) for rule in await query.order_by("id")]


async def revoke(rule_id: int) -> None:
    """Forget a remembered decision: the next matching command asks again."""
    if not await ApprovalRule.filter(id=rule_id).delete():
        raise NotFound(f"no remembered approval {rule_id}")


async def pending_approvals() -> list[tuple[str, PauseView]]:
    """Every approval still waiting for a decision (with its run id), oldest first."""
    rows = ClarifyPause.filter(kind=PauseKind.APPROVAL, status=PauseStatus.UNANSWERED)
    return [(pause.run_id, view(pause)) for pause in await rows.order_by("id")]


async def _session_of(pause: ClarifyPause) -> int:
    message = await ChatMessage.get(id=pause.message_id)
    return message.session_id


def _rule_view(rule: ApprovalRule) -> RuleView:
    return RuleView(rule.id, rule.pattern_key, rule.session_id, rule.decided_by, rule.created_at)
