"""Tool approvals: hermes-agent's gateway approval path (`tools/approval.py`), answered through
the Bridge instead of a chat platform's buttons.

hermes-agent asks its approval question only inside a "gateway" context: with
`HERMES_EXEC_ASK` set it looks for a notify callback registered under the turn's approval
session key, and when there is none it refuses the command ("approval required"); without
`HERMES_EXEC_ASK` and without a CLI it would approve it unasked. `prepare_hermes_home` sets
`HERMES_EXEC_ASK` for the whole process, so a flagged command never runs unasked; each turn
binds its own key (the run id) and registers `ApprovalGate` under it for the turn's length.

The notify callback blocks the tool's thread on the Bridge's pause board (no timeout but the
fallback, like a clarify) and then settles hermes-agent's queued entry with the decision.
hermes-agent's own memory of decisions is scoped to the run: the remembered ones
("this conversation", "always") live in the runtime's database and arrive with each run as
`approved_patterns`; "always" is given to hermes-agent as "session", so it never writes its
own permanent allowlist.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from bridge.clarify_board import ClarifyBoard, ClarifyTicket

DECISIONS = ("once", "session", "always", "deny")
TICKET_PREFIX = "apr"


@dataclass(frozen=True, slots=True)
class ApprovalQuestion:
    """One flagged call as the approval_request event shows it."""

    tool: str
    command: str
    reason: str
    pattern_key: str
    choices: tuple[str, ...]

    def event_data(self, approval_id: str) -> dict[str, Any]:
        return {"approval_id": approval_id, "tool": self.tool, "command": self.command,
                "reason": self.reason, "pattern_key": self.pattern_key,
                "choices": list(self.choices)}


@dataclass(frozen=True, slots=True)
class StoredDecision:
    """A decision given to a question the previous Bridge asked (a resumed turn)."""

    pattern_key: str
    command: str
    decision: str


def question_of(data: dict[str, Any], tool: str) -> ApprovalQuestion:
    """hermes-agent's approval data as our question (its texts are already redacted)."""
    keys = [str(k) for k in data.get("pattern_keys") or () if k]
    pattern_key = str(data.get("pattern_key") or (keys[0] if keys else ""))
    permanent = bool(data.get("allow_permanent", True)) and not data.get("smart_denied")
    choices = DECISIONS if permanent else ("once", "deny")
    return ApprovalQuestion(tool, str(data.get("command") or ""),
                            str(data.get("description") or ""), pattern_key, choices)


class ApprovalGate:
    """The approval path of one turn; `bound()` wraps the turn on the agent's thread."""

    def __init__(self, board: ClarifyBoard, run_id: str, approved: tuple[str, ...],
                 stored: StoredDecision | None,
                 announce: Callable[[ApprovalQuestion, ClarifyTicket], None],
                 tool_of: Callable[[str], str], refuse_all: bool = False) -> None:
        self._board = board
        self._refuse_all = refuse_all
        self._run_id = run_id
        self._approved = approved
        self._stored = stored
        self._announce = announce
        self._tool_of = tool_of
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def bound(self) -> Iterator[None]:
        """Make this thread's turn a gateway context whose questions come here."""
        from tools import approval

        token = approval.set_current_session_key(self._run_id)
        for pattern_key in self._approved:
            approval.approve_session(self._run_id, pattern_key)
        approval.register_gateway_notify(self._run_id, self._notify)
        try:
            yield
        finally:
            approval.unregister_gateway_notify(self._run_id)
            approval.clear_session(self._run_id)
            approval.reset_current_session_key(token)

    def _notify(self, data: dict[str, Any]) -> None:
        """hermes-agent's notify callback (a tool's thread): decide, then settle its entry."""
        question = question_of(data, self._tool_of(str(data.get("command") or "")))
        _settle(self._run_id, data, self._decide(question))

    def _decide(self, question: ApprovalQuestion) -> str:
        if self._refuse_all:  # the channel lets nobody approve: refused, nobody asked
            return "deny"
        stored = self._take_stored(question)
        if stored is not None:
            return stored
        ticket = self._board.ask(self._run_id, question.command, list(question.choices),
                                 lambda t: self._announce(question, t), prefix=TICKET_PREFIX)
        if ticket.state != "answered" or ticket.answer not in question.choices:
            return "deny"  # cancelled (abort, shutdown) or past the fallback: not consent
        return ticket.answer

    def _take_stored(self, question: ApprovalQuestion) -> str | None:
        """The previous Bridge's decision, once, for the same command (a model that asks
        something else on the resumed step is asked about that)."""
        with self._lock:
            stored = self._stored
            if stored is None or (stored.pattern_key, stored.command) != (
                    question.pattern_key, question.command):
                return None
            self._stored = None
        return stored.decision


def _settle(session_key: str, data: dict[str, Any], decision: str) -> None:
    """Wake hermes-agent's wait on exactly this entry (its queue holds one per waiting tool
    thread; `data` is the entry's own dict)."""
    from tools import approval

    choice = "session" if decision == "always" else decision
    with approval._lock:
        entries = list(approval._gateway_queues.get(session_key, ()))
    for entry in entries:
        if entry.data is data:
            entry.result = choice
            entry.event.set()
