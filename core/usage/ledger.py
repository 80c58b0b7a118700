"""Each model call recorded once: a `usage_call` row and its share of the day's sums
(`usage_day`: the day's row of its user, its channel, its workspace and its model), in one
transaction.

The row's key is its assistant message and the `usage` event's seq: the Bridge numbers a run's
events once (a continuation after a Bridge restart goes on after the highest id the runtime
saw, docs/bridge-protocol.md), so an event replayed after a reconnect, a `serve` restart or a
takeover by another replica finds its row and adds nothing. The call is recorded as soon as it
arrives, before its log row is flushed: a process that dies in between is sent the event again
(the replay starts after the last stored log row) and the insert skips it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC

from tortoise import connections

from core.agent.events import Usage
from core.store.outage import transaction
from core.usage.spenders import Spender

_CALL = ("message_id, seq, run_id, session_id, platform, workspace, channel, \"user\", model, "
         "prompt_tokens, completion_tokens, cached_tokens, cost, at")
_DAY_KEY = "dimension, subject, workspace, day, platform"
_SUMS = ("calls", "prompt_tokens", "completion_tokens", "cached_tokens", "cost", "priced_calls")
_INSERT_CALL = (f"INSERT INTO usage_call ({_CALL}) VALUES ({{}}) "
                "ON CONFLICT (message_id, seq) DO NOTHING RETURNING id")
_ADD_TO_DAY = (f"INSERT INTO usage_day ({_DAY_KEY}, {', '.join(_SUMS)}) VALUES {{}} "
               f"ON CONFLICT ({_DAY_KEY}) DO UPDATE SET "
               + ", ".join(f"{c} = usage_day.{c} + excluded.{c}" for c in _SUMS))
DIMENSIONS = ("user", "channel", "workspace", "model")  # the four sums of a day
MODEL_CHARS = 128  # usage_call.model


@dataclass(frozen=True, slots=True)
class Call:
    """One model call of a run, as the runtime records it (`usage.cost` set from the price)."""

    message_id: int
    run_id: str
    session_id: int
    spender: Spender
    usage: Usage


async def record(call: Call) -> bool:
    """Store the call and add it to its day; False when it was stored already (a replay)."""
    usage, spender = call.usage, call.spender
    model = (usage.model or "")[:MODEL_CHARS]
    at = usage.at.astimezone(UTC)
    values = [call.message_id, usage.seq, call.run_id, call.session_id, spender.platform,
              spender.workspace, spender.channel, spender.user, model, usage.prompt_tokens,
              usage.completion_tokens, usage.cached_tokens, usage.cost, at]
    postgres = _dialect() == "postgres"
    day = at.date() if postgres else at.date().isoformat()
    sums = [1, usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens,
            usage.cost or 0.0, 0 if usage.cost is None else 1]
    keys = [("user", spender.user, ""), ("channel", spender.channel, spender.workspace),
            ("workspace", spender.workspace, ""), ("model", model, "")]
    rows = [[dimension, subject, workspace, day, spender.platform, *sums]
            for dimension, subject, workspace in keys]
    async with transaction() as connection:
        # The returned id says it was added (tortoise counts an INSERT's rows as 0 on asyncpg).
        added = await connection.execute_query_dict(
            _INSERT_CALL.format(_marks(len(values), postgres)), values)
        if not added:
            return False
        groups = ", ".join(f"({_marks(len(rows[0]), postgres, len(rows[0]) * k)})"
                           for k in range(len(rows)))
        await connection.execute_query(_ADD_TO_DAY.format(groups),
                                       [value for row in rows for value in row])
    return True


def _marks(count: int, postgres: bool, after: int = 0) -> str:
    """`count` placeholders, numbered from `after + 1` on PostgreSQL."""
    if postgres:
        return ", ".join(f"${i}" for i in range(after + 1, after + count + 1))
    return ", ".join("?" * count)


def _dialect() -> str:
    return str(connections.get("default").capabilities.dialect)
