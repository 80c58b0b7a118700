"""The one error hierarchy of core; each edge (admin API, bots) translates it once."""

from __future__ import annotations


class HermesChatError(Exception):
    """Base of every error core raises on purpose; `code` is stable for API clients."""

    code = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def public(self) -> str:
        """What a person is told (a chat user, an API client); `message` is for the log and
        may say more (what an outage looked like from here)."""
        return self.message


class NotFound(HermesChatError):
    """An id that names nothing (or nothing the caller may reach)."""

    code = "not_found"


class RunLost(NotFound):
    """The Bridge answers but no longer knows a run it had (its process restarted): the run
    goes on from its last checkpoint (core/runtime/continuation.py). `message` names the
    Bridge and what it said; a run that is lost too often fails with `public`."""

    code = "run_lost"
    PUBLIC = "The agent service lost this run and could not pick it up again; please try again."

    @property
    def public(self) -> str:
        return self.PUBLIC


class InvalidInput(HermesChatError):
    """A request that can never succeed as sent: wrong kind of message, bad value."""

    code = "invalid_input"


class Conflict(HermesChatError):
    """A request that clashes with current state: already answered, already exists."""

    code = "conflict"


class Busy(Conflict):
    """The session already has a run in flight."""

    code = "busy"


class BridgeUnavailable(HermesChatError):
    """The Hermes Bridge could not be reached or answered garbage; the session stays usable.

    `message` says what happened (status, method, path, the Bridge's words) for the log; people
    are told only `public`: the Bridge's address and routes are nothing they can act on."""

    code = "bridge_unavailable"
    PUBLIC = "The agent service is unreachable right now; please try again in a minute."

    @property
    def public(self) -> str:
        return self.PUBLIC


class MalformedEvent(HermesChatError):
    """The Bridge sent an event a run cannot go on without (`done`, `error`,
    `clarify_request`) in a shape the protocol does not allow: the run fails with this reason."""

    code = "malformed_event"


class DatabaseUnavailable(HermesChatError):
    """The database stayed unreachable longer than a run may wait; the run is left in flight
    for recovery to resume."""

    code = "database_unavailable"


class RateLimited(HermesChatError):
    """A chat user started more runs than RUNS_PER_USER_PER_MINUTE allows; `retry_after` s."""

    code = "rate_limited"

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class SpendLimitReached(HermesChatError):
    """A run refused, or stopped, because a spend limit is reached (core/usage/limits.py): the
    message says which, when it resets and who can raise it; `limit` says it for API clients
    (scope, subject, period, unit, amount, used, resetsAt) and `retry_after` is the seconds
    until it resets."""

    code = "spend_limit"

    def __init__(self, message: str, limit: dict[str, object], retry_after: float) -> None:
        super().__init__(message)
        self.limit = limit
        self.retry_after = retry_after


class NotYours(HermesChatError):
    """A click on a turn someone else started, under CONVERSATION_ACTIONS=asker; `asker` is
    who may (with the chat admins), None when nobody on a platform started it."""

    code = "not_yours"

    def __init__(self, asker: str | None) -> None:
        super().__init__("only the person who asked (or a chat admin) may do that here")
        self.asker = asker


class AdminOnly(HermesChatError):
    """A decision only a chat admin may take ("Always allow" a tool's command everywhere)."""

    code = "admin_only"


class ChannelAdminOnly(AdminOnly):
    """A change of a channel's settings, which only a chat admin may make."""
