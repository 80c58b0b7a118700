"""Recording a model call: once per (message, seq), with its share of the day's sums."""

from __future__ import annotations

from datetime import UTC, date, datetime

from core.agent.events import Usage
from core.store.models import UsageCall, UsageDay
from core.usage.ledger import Call, record
from core.usage.spenders import Spender

AT = datetime(2026, 8, 2, 23, 59, 59, tzinfo=UTC)
ASKER = Spender("slack", "T1", "C1", "U1")


def call(seq: int, *, at: datetime = AT, cost: float | None = None, model: str = "m",
         spender: Spender = ASKER, message_id: int = 7) -> Call:
    usage = Usage(seq=seq, at=at, model=model, prompt_tokens=100, completion_tokens=10,
                  cached_tokens=40, cost=cost)
    return Call(message_id, "run-1", 3, spender, usage)


async def test_a_call_is_stored_once_and_added_to_its_day_once(db: str) -> None:
    assert await record(call(4, cost=0.5))
    assert not await record(call(4, cost=0.5))  # replayed: the same message and seq
    assert await record(call(9))  # the next call of the run (not priced)

    rows = await UsageCall.all().order_by("seq")
    assert [(r.seq, r.prompt_tokens, r.completion_tokens, r.cached_tokens, r.cost)
            for r in rows] == [(4, 100, 10, 40, 0.5), (9, 100, 10, 40, None)]
    assert (rows[0].platform, rows[0].workspace, rows[0].channel, rows[0].user,
            rows[0].model, rows[0].run_id, rows[0].session_id) == (
        "slack", "T1", "C1", "U1", "m", "run-1", 3)
    days = await UsageDay.all().order_by("dimension").values_list(
        "dimension", "subject", "workspace", "day", "platform", "calls", "prompt_tokens",
        "completion_tokens", "cached_tokens", "cost", "priced_calls")
    sums = (date(2026, 8, 2), "slack", 2, 200, 20, 80, 0.5, 1)
    assert days == [("channel", "C1", "T1", *sums), ("model", "m", "", *sums),
                    ("user", "U1", "", *sums), ("workspace", "T1", "", *sums)]


async def test_calls_are_summed_by_day_and_platform_in_each_dimension(db: str) -> None:
    await record(call(1))
    await record(call(2, at=datetime(2026, 8, 3, 0, 0, tzinfo=UTC)))  # the next UTC day
    await record(call(3, model="other"))
    await record(call(1, message_id=8, spender=Spender("discord", "G1", "C9", "D1")))
    keys = await UsageDay.filter(dimension="user").order_by("day", "platform").values_list(
        "day", "platform", "subject", "calls")
    assert keys == [(date(2026, 8, 2), "discord", "D1", 1), (date(2026, 8, 2), "slack", "U1", 2),
                    (date(2026, 8, 3), "slack", "U1", 1)]
    models = await UsageDay.filter(dimension="model").order_by(
        "day", "subject", "platform").values_list("day", "subject", "platform", "calls")
    assert models == [(date(2026, 8, 2), "m", "discord", 1), (date(2026, 8, 2), "m", "slack", 1),
                      (date(2026, 8, 2), "other", "slack", 1), (date(2026, 8, 3), "m", "slack", 1)]
