"""Pauses of a turn: the agent's thread blocks (hermes-agent's own `tools.clarify_gateway`)
until an answer arrives (POST /clarify/{id}/answer, or POST /runs/{id}/approval for a tool
approval: bridge/approval_gate.py), with no timeout but a configurable fallback (24 h)."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from bridge.errors import ClarifyAnswered, ClarifyNotFound


@dataclass
class ClarifyTicket:
    """One question; `state` is pending, answered, expired or cancelled."""

    clarify_id: str
    run_id: str
    question: str
    choices: list[str] = field(default_factory=list)
    state: str = "pending"
    answer: str | None = None


class ClarifyBoard:
    """Every clarify the Bridge asked, so a late or second answer gets a precise error."""

    def __init__(self, fallback_seconds: float) -> None:
        self._fallback = fallback_seconds
        self._lock = threading.Lock()
        self._tickets: dict[str, ClarifyTicket] = {}

    def ask(self, run_id: str, question: str, choices: list[str],
            announce: Callable[[ClarifyTicket], None], prefix: str = "clr") -> ClarifyTicket:
        """Agent thread: register, announce, block until answered, cancelled or expired."""
        from tools import clarify_gateway

        ticket = ClarifyTicket(f"{prefix}-{uuid.uuid4().hex}", run_id, question, choices[:4])
        with self._lock:
            self._tickets[ticket.clarify_id] = ticket
            clarify_gateway.register(ticket.clarify_id, run_id, question, ticket.choices)
        announce(ticket)
        clarify_gateway.wait_for_response(ticket.clarify_id, self._fallback)
        with self._lock:
            if ticket.state == "pending":
                ticket.state = "expired"
        return ticket

    def find(self, clarify_id: str) -> ClarifyTicket | None:
        """The ticket of `clarify_id`, if this Bridge asked it."""
        with self._lock:
            return self._tickets.get(clarify_id)

    def answer(self, clarify_id: str, answer: str) -> ClarifyTicket:
        """Any thread: wake the agent waiting on `clarify_id`."""
        from tools import clarify_gateway

        with self._lock:
            ticket = self._tickets.get(clarify_id)
            if ticket is None:
                raise ClarifyNotFound(f"no clarify {clarify_id!r}")
            if ticket.state != "pending":
                raise ClarifyAnswered(f"clarify {clarify_id!r} is already {ticket.state}")
            ticket.state, ticket.answer = "answered", answer
            clarify_gateway.resolve_gateway_clarify(clarify_id, answer)
        return ticket

    def cancel_run(self, run_id: str) -> None:
        """Release every pending clarify of a run (abort, shutdown)."""
        from tools import clarify_gateway

        with self._lock:
            for ticket in self._tickets.values():
                if ticket.run_id == run_id and ticket.state == "pending":
                    ticket.state = "cancelled"
        clarify_gateway.clear_session(run_id)

    def forget_runs(self, run_ids: list[str]) -> None:
        """Drop the tickets of pruned runs."""
        gone = set(run_ids)
        with self._lock:
            self._tickets = {k: t for k, t in self._tickets.items() if t.run_id not in gone}
