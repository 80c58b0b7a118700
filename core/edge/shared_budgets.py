"""The rate budgets every replica spends: token buckets as rows of PostgreSQL's `rate_budget`.

A BudgetStore (core/edge/ratelimit.py) for `serve` on PostgreSQL, where several replicas may run:
a take is one statement, one round trip (on the edge's own connections, core/store/db.py: a
platform call never waits for a connection behind the runtime's transactions). It locks the
key's row (SELECT ... FOR UPDATE), refills it for the time since its last take, takes a token
if the key is open and more than the reserve is left, and answers what is left; a key's first
take inserts its row, full, in the same statement. Time is the database's clock
(`clock_timestamp()`), never a replica's: the replicas' hosts may disagree by seconds, the one
server does not disagree with itself, and what travels back to a replica are durations
(tokens, seconds closed) that its own clock can measure. A test may inject a clock instead.

A sliding window (`Limit.window`) keeps the times of its calls in the row's `taken` array
(a column PostgreSQL alone has: migrations/0019): a take drops those older than the window and
adds its own if the window has room for it beyond the reserve, in the same one statement.

SQLite means one process (docs/operations.md: several replicas), so there the limiter keeps its own buckets and the
table stays empty. A bucket untouched for an hour is full again, the same as no row: the upkeep
jobs sweep those (`sweep`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from core.edge.ratelimit import BudgetStore, BudgetUnavailable, Limit, Take
from core.store.db import edge_connection, is_sqlite
from core.store.models import RateBudget
from core.store.outage import is_outage
from core.text.safe_text import storable_key

KEY_LENGTH = 200  # rate_budget.budget_key
IDLE = 3600.0  # seconds: every Limit refills within a minute; an hour idle is surely full

_NOW = "COALESCE($2::float8, extract(epoch FROM clock_timestamp())::float8)"

_TAKE = f"""
WITH t AS (SELECT {_NOW} AS now),
seed AS (
    INSERT INTO rate_budget (budget_key, tokens, updated, closed_until)
    SELECT $1, $3::float8 - 1, t.now, 0 FROM t
    ON CONFLICT (budget_key) DO NOTHING
    RETURNING true AS taken, tokens, 0::float8 AS closed_for),
cur AS (
    SELECT b.budget_key, t.now, GREATEST(0, b.closed_until - t.now) AS closed_for,
           LEAST($3::float8, b.tokens + GREATEST(0, t.now - b.updated) * $4::float8) AS tokens
    FROM rate_budget b, t WHERE b.budget_key = $1 FOR UPDATE OF b),
v AS (SELECT *, closed_for <= 0 AND tokens >= 1 + $5::float8 AS taken FROM cur),
spent AS (
    UPDATE rate_budget b SET tokens = v.tokens - CASE WHEN v.taken THEN 1 ELSE 0 END,
                             updated = GREATEST(b.updated, v.now)
    FROM v WHERE b.budget_key = v.budget_key
    RETURNING v.taken, b.tokens, v.closed_for)
SELECT taken, tokens, closed_for FROM seed
UNION ALL SELECT taken, tokens, closed_for FROM spent
"""

_TAKE_WINDOW = f"""
WITH t AS (SELECT {_NOW} AS now),
seed AS (
    INSERT INTO rate_budget (budget_key, tokens, updated, closed_until, taken)
    SELECT $1, $3::float8 - 1, t.now, 0, ARRAY[t.now] FROM t
    ON CONFLICT (budget_key) DO NOTHING
    RETURNING true AS taken, tokens, 0::float8 AS closed_for, $4::float8 AS refill_in),
cur AS (
    SELECT b.budget_key, t.now, GREATEST(0, b.closed_until - t.now) AS closed_for,
           ARRAY(SELECT x FROM unnest(b.taken) x WHERE x > t.now - $4::float8 ORDER BY x) AS kept
    FROM rate_budget b, t WHERE b.budget_key = $1 FOR UPDATE OF b),
v AS (SELECT *, closed_for <= 0 AND cardinality(kept) + 1 + $5::float8 <= $3::float8 AS ok
      FROM cur),
w AS (SELECT *, CASE WHEN ok THEN kept || now ELSE kept END AS calls FROM v),
spent AS (
    UPDATE rate_budget b SET taken = w.calls, tokens = $3::float8 - cardinality(w.calls),
                             updated = GREATEST(b.updated, w.now)
    FROM w WHERE b.budget_key = w.budget_key
    RETURNING w.ok AS taken, b.tokens, w.closed_for,
              COALESCE(w.calls[1] + $4::float8 - w.now, 0) AS refill_in)
SELECT taken, tokens, closed_for, refill_in FROM seed
UNION ALL SELECT taken, tokens, closed_for, refill_in FROM spent
"""

_CLOSE = f"""
INSERT INTO rate_budget (budget_key, tokens, updated, closed_until)
SELECT $1, 0, t.now, t.now + $3::float8 FROM (SELECT {_NOW} AS now) t
ON CONFLICT (budget_key) DO UPDATE SET
    tokens = LEAST(rate_budget.tokens, 0),
    updated = GREATEST(rate_budget.updated, EXCLUDED.updated),
    closed_until = GREATEST(rate_budget.closed_until, EXCLUDED.closed_until)
"""


class PostgresBudgets:
    """Shared buckets in `rate_budget` (see the module); `clock`: None for the database's."""

    def __init__(self, clock: Callable[[], float] | None = None) -> None:
        self._clock = clock

    async def take(self, key: str, limit: Limit, reserve: float) -> Take:
        sql = _TAKE_WINDOW if limit.window else _TAKE
        params = [storable_key(key, KEY_LENGTH), self._now(), float(limit.burst),
                  limit.window or limit.per_second, reserve]
        for _ in range(2):  # a key's first takes, side by side: one inserts, the other asks again
            rows = await self._query(sql, params)
            if rows:
                row = rows[0]
                return Take(bool(row["taken"]), float(row["tokens"]), float(row["closed_for"]),
                            float(row.get("refill_in") or 0.0))
        raise BudgetUnavailable(f"no row for {key!r}")  # only if it was swept meanwhile, twice

    async def close(self, key: str, seconds: float) -> None:
        await self._query(_CLOSE, [storable_key(key, KEY_LENGTH), self._now(), seconds])

    def _now(self) -> float | None:
        return None if self._clock is None else self._clock()

    async def _query(self, sql: str, params: list[Any]) -> list[Any]:
        try:
            _, rows = await edge_connection().execute_query(sql, params)
        except Exception as error:
            if is_outage(error):
                raise BudgetUnavailable(type(error).__name__) from error
            raise
        return list(rows)


def budget_store(database_url: str) -> BudgetStore | None:
    """Where `serve`'s rate budgets live: the database's table on PostgreSQL (replicas share
    it), the limiter's own buckets on SQLite (one process)."""
    return None if is_sqlite(database_url) else PostgresBudgets()


async def sweep(clock: Callable[[], float] = time.time) -> int:
    """Forget the buckets idle for an hour (full again: the same as no row); an upkeep job."""
    now = clock()
    return await RateBudget.filter(updated__lt=now - IDLE, closed_until__lt=now).delete()
