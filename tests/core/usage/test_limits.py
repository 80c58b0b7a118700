"""Spend limits per user, channel and workspace, per UTC day and month, in tokens or cost:
each refuses in its own words, an operator's limit takes the default's place, and each period
resets at its end (an injected clock)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.agent.events import Usage
from core.errors import SpendLimitReached
from core.store.models import LimitPeriod, LimitScope, LimitUnit
from core.usage import ledger
from core.usage.limits import KEYS, SpendLimits, setting_name, set_override
from core.usage.spenders import Spender

SPENT_AT = datetime(2026, 3, 31, 23, 0, tzinfo=UTC)  # the last hour of a day and of a month
ALICE = Spender("slack", "T1", "C1", "U1")
DAY, MONTH = LimitPeriod.DAY, LimitPeriod.MONTH
USER, CHANNEL, WORKSPACE = LimitScope.USER, LimitScope.CHANNEL, LimitScope.WORKSPACE
TOKENS, COST = LimitUnit.TOKENS, LimitUnit.COST


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


async def spend(spender: Spender = ALICE, at: datetime = SPENT_AT, seq: int = 1) -> None:
    """One call: 1,000 + 100 tokens, $0.50."""
    usage = Usage(seq=seq, at=at, model="m", prompt_tokens=1000, completion_tokens=100, cost=0.5)
    await ledger.record(ledger.Call(seq, "run", 1, spender, usage))


WORDS = {  # each limit, and how its refusal begins
    (USER, DAY, TOKENS): "You have used 1,100 tokens of the 1,000 tokens you may use a day",
    (USER, DAY, COST): "You have used $0.50 of the $0.25 you may spend a day",
    (USER, MONTH, TOKENS): "You have used 1,100 tokens of the 1,000 tokens you may use a month",
    (USER, MONTH, COST): "You have used $0.50 of the $0.25 you may spend a month",
    (CHANNEL, DAY, TOKENS): "This channel has used 1,100 tokens of the 1,000 tokens it may use a day",
    (CHANNEL, DAY, COST): "This channel has used $0.50 of the $0.25 it may spend a day",
    (CHANNEL, MONTH, TOKENS): "This channel has used 1,100 tokens of the 1,000 tokens it may use a month",
    (CHANNEL, MONTH, COST): "This channel has used $0.50 of the $0.25 it may spend a month",
    (WORKSPACE, DAY, TOKENS): "This workspace has used 1,100 tokens of the 1,000 tokens it may use a day",
    (WORKSPACE, DAY, COST): "This workspace has used $0.50 of the $0.25 it may spend a day",
    (WORKSPACE, MONTH, TOKENS): "This workspace has used 1,100 tokens of the 1,000 tokens it may use a month",
    (WORKSPACE, MONTH, COST): "This workspace has used $0.50 of the $0.25 it may spend a month",
}


def amount(key: tuple) -> float:
    return 1000 if key[2] == TOKENS else 0.25


@pytest.mark.parametrize("key", KEYS, ids=[setting_name(k) for k in KEYS])
async def test_each_limit_refuses_saying_which_when_it_resets_and_who_can_raise_it(
    db: str, key: tuple
) -> None:
    await spend()
    limits = SpendLimits({key: amount(key)}, Clock(SPENT_AT + timedelta(minutes=5)))
    with pytest.raises(SpendLimitReached) as refused:
        await limits.check(ALICE)
    said = refused.value.public
    resets = "at midnight UTC (in 55 min)"  # the day and the month both end at midnight
    assert said == f"{WORDS[key]}, so I did not answer. It resets {resets}; the bot's " \
                   "operators can raise it."
    assert refused.value.limit["scope"] == key[0] and refused.value.limit["subject"] == {
        USER: "U1", CHANNEL: "C1", WORKSPACE: "T1"}[key[0]]
    assert refused.value.retry_after == 55 * 60
    other = Spender("slack", "T2", "C9", "U9")  # another person, channel and workspace
    await limits.check(other)


async def test_a_limit_not_reached_lets_a_run_through_and_an_exempt_one_is_never_refused(
    db: str
) -> None:
    await spend()
    clock = Clock(SPENT_AT)
    await SpendLimits({(USER, DAY, TOKENS): 1101, (USER, DAY, COST): 0.51}, clock).check(ALICE)
    limits = SpendLimits({key: amount(key) for key in KEYS}, clock)
    exempt = Spender("api", "T1", "C1", "admin", exempt=True)
    await limits.check(exempt)
    with pytest.raises(SpendLimitReached, match="^You have used 1,100 tokens"):  # users first
        await limits.check(ALICE)
    stopped = SpendLimits({(CHANNEL, MONTH, COST): 0.25}, clock)
    with pytest.raises(SpendLimitReached, match="it may spend a month, so I stopped this answer"):
        await stopped.check(ALICE, stopped=True)


async def test_the_day_resets_at_midnight_utc_and_the_month_on_the_first(db: str) -> None:
    await spend(at=datetime(2026, 3, 1, 0, 0, tzinfo=UTC))
    await spend(at=datetime(2026, 3, 31, 23, 59, 59, tzinfo=UTC), seq=2)
    clock = Clock(datetime(2026, 3, 31, 23, 59, 59, tzinfo=UTC))
    day = SpendLimits({(USER, DAY, TOKENS): 1100}, clock)
    month = SpendLimits({(USER, MONTH, TOKENS): 2200}, clock)
    for limits in (day, month):
        with pytest.raises(SpendLimitReached):
            await limits.check(ALICE)
    clock.now = datetime(2026, 4, 1, 0, 0, tzinfo=UTC)  # the next day, and the next month
    await day.check(ALICE)
    await month.check(ALICE)
    clock.now = datetime(2026, 3, 31, 12, 0, tzinfo=UTC)  # earlier that day: the first call
    with pytest.raises(SpendLimitReached, match="resets at midnight UTC \\(in 12 h 00 min\\)"):
        await day.check(ALICE)  # only the calls of that day count: the last one is in it too


async def test_a_month_limit_counts_every_day_of_the_month_and_says_when_it_resets(
    db: str
) -> None:
    for seq, day in enumerate((1, 9, 20), start=1):
        await spend(at=datetime(2026, 2, day, 12, tzinfo=UTC), seq=seq)
    await spend(at=datetime(2026, 1, 31, 12, tzinfo=UTC), seq=4)  # the month before
    limits = SpendLimits({(USER, MONTH, COST): 1.5}, Clock(datetime(2026, 2, 20, 13, tzinfo=UTC)))
    with pytest.raises(SpendLimitReached) as refused:
        await limits.check(ALICE)
    assert refused.value.public.startswith("You have used $1.50 of the $1.50 you may spend")
    assert "It resets on 1 March at 00:00 UTC (in 8 days)" in refused.value.public


async def test_an_operators_limit_takes_the_defaults_place_for_that_one(db: str) -> None:
    await spend()
    await spend(Spender("slack", "T1", "C1", "U2"), seq=2)
    limits = SpendLimits({(USER, DAY, TOKENS): 1000}, Clock(SPENT_AT))
    await set_override(USER, "U1", DAY, TOKENS, 5000)  # raised for U1
    await limits.check(ALICE)
    with pytest.raises(SpendLimitReached, match="of the 1,000 tokens"):
        await limits.check(Spender("slack", "T1", "C1", "U2"))  # the default for others
    await set_override(USER, "U2", DAY, TOKENS, None)  # lifted for U2
    await limits.check(Spender("slack", "T1", "C1", "U2"))
    await set_override(WORKSPACE, "T9", MONTH, COST, 0)  # nothing at all in T9
    with pytest.raises(SpendLimitReached, match="This workspace has used \\$0 of the \\$0"):
        await limits.check(Spender("slack", "T9", "C1", "U1"))
    discord = Spender("discord", "G1", "D1", "D9")
    await set_override(WORKSPACE, "G1", DAY, TOKENS, 0)
    with pytest.raises(SpendLimitReached, match="^This server has used"):
        await limits.check(discord)
