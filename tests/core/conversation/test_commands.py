"""The platform-neutral `/hermes` commands' results: a person's own usage."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from core.agent.events import Usage
from core.conversation import commands
from core.store.models import LimitPeriod, LimitScope, LimitUnit
from core.usage import ledger
from core.usage.limits import SpendLimits
from core.usage.spenders import Spender

NOW = datetime(2026, 5, 31, 22, 0, tzinfo=UTC)


@dataclass
class Limited:
    """What `own_usage` reads of the run pool: its spend limits and their clock."""

    limits: SpendLimits


async def _call(seq: int, at: datetime, user: str = "U1", cost: float | None = 0.5) -> None:
    usage = Usage(seq=seq, at=at, model="m", prompt_tokens=100, completion_tokens=10, cost=cost)
    await ledger.record(ledger.Call(1, "r", 1, Spender("slack", "T1", "C1", user), usage))


async def test_own_usage_counts_the_persons_calls_of_this_utc_day_and_month(db: str) -> None:
    await _call(1, NOW)
    await _call(2, datetime(2026, 5, 31, 0, 0, tzinfo=UTC))  # today, its first minute
    await _call(3, datetime(2026, 5, 1, tzinfo=UTC))  # this month
    await _call(4, datetime(2026, 4, 30, 23, 59, tzinfo=UTC))  # last month: not counted
    await _call(5, NOW, user="U2")  # someone else

    pool = Limited(SpendLimits({(LimitScope.USER, LimitPeriod.DAY, LimitUnit.COST): 5.0,
                                (LimitScope.CHANNEL, LimitPeriod.DAY, LimitUnit.COST): 1.0},
                               lambda: NOW))
    usage = await commands.own_usage(pool, "U1")  # type: ignore[arg-type]
    today, month = usage.lines()

    assert today == ("Today", "2 model calls · 220 tokens (200 in, 20 out) · $1.00; resets at "
                              "midnight UTC (in 2 h 00 min)")
    assert month == ("This month", "3 model calls · 330 tokens (300 in, 30 out) · $1.50; resets "
                                   "at midnight UTC (in 2 h 00 min)")  # June begins at midnight
    assert usage.limits == ("$5.00 a day: $1.00 used",)  # their own: a channel's is not theirs
    nobody = (await commands.own_usage(pool, "U3")).lines()  # type: ignore[arg-type]
    assert [words.split(";")[0] for _, words in nobody] == ["nothing yet", "nothing yet"]
