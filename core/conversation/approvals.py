"""Tool approvals as an operator sees them (the admin API): those waiting, oldest first, one by
its id, and the rules "always allow" made, with their revocation. A decision itself goes through
the run pool (`RunPool.decide`: the asker or a chat admin, the first decision wins)."""

from __future__ import annotations

from core.runtime.approvals import RuleView, find_approval, list_rules, pending_approvals, revoke

__all__ = ["RuleView", "find_approval", "list_rules", "pending_approvals", "revoke"]
