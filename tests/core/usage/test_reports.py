"""What model calls spent, summed: per answer, per conversation, and by user, channel,
workspace, model or day over a range of UTC days, a page at a time."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from core.agent.events import Usage
from core.agent.thinking import UsageTotals
from core.errors import InvalidInput
from core.usage import reports
from core.usage.ledger import Call, record
from core.usage.spenders import Spender

AT = datetime(2026, 8, 2, 12, 0, tzinfo=UTC)
ALICE = Spender("slack", "T1", "C1", "U1")
BOB = Spender("slack", "T1", "C2", "U2")
CAROL = Spender("discord", "G1", "D1", "D9")
OPERATOR = Spender("api", "T1", "C1", "admin")


async def spend(seq: int, spender: Spender, *, day: int = 2, model: str = "small",
                cost: float | None = 0.25, message_id: int = 1, session_id: int = 1) -> None:
    usage = Usage(seq=seq, at=AT.replace(day=day), model=model, prompt_tokens=100,
                  completion_tokens=10, cached_tokens=40, cost=cost)
    await record(Call(message_id, "run", session_id, spender, usage))


async def test_an_answer_and_its_conversation_sum_their_calls(db: str) -> None:
    await spend(1, ALICE, message_id=7, session_id=3)
    await spend(2, ALICE, message_id=7, session_id=3, cost=None)
    await spend(1, ALICE, message_id=8, session_id=3, cost=0.5)
    await spend(1, ALICE, message_id=9, session_id=4, cost=None)  # another conversation

    answers = await reports.of_messages([7, 8, 10])
    assert answers == {7: UsageTotals(2, 200, 20, 80, 0.25), 8: UsageTotals(1, 100, 10, 40, 0.5)}
    assert await reports.of_session(3) == UsageTotals(3, 300, 30, 120, 0.75)
    assert await reports.of_session(5) == UsageTotals()
    assert (await reports.of_messages([9]))[9].cost is None  # not priced


@pytest.fixture
async def spent(db: str) -> None:
    """Calls of three people and an operator, two models, three days and two platforms."""
    calls = [(ALICE, 1, "small"), (ALICE, 2, "small"), (ALICE, 2, "large"), (BOB, 2, "small"),
             (BOB, 3, "large"), (CAROL, 2, "small"), (OPERATOR, 2, "large")]
    for seq, (spender, day, model) in enumerate(calls, start=1):
        await spend(seq, spender, day=day, model=model)


def keyed(report: reports.Report) -> list[tuple[tuple[str, ...], int]]:
    return [(tuple(row.key.values()), row.usage.calls) for row in report.rows]


async def test_calls_are_summed_by_each_dimension_in_key_order(spent: None) -> None:
    assert keyed(await reports.report("user")) == [
        (("api", "admin"), 1), (("discord", "D9"), 1), (("slack", "U1"), 3), (("slack", "U2"), 2)]
    assert keyed(await reports.report("channel")) == [
        (("G1", "D1"), 1), (("T1", "C1"), 4), (("T1", "C2"), 2)]  # the operator's run in C1 too
    assert keyed(await reports.report("workspace")) == [(("G1",), 1), (("T1",), 6)]
    assert keyed(await reports.report("model")) == [(("large",), 3), (("small",), 4)]
    assert keyed(await reports.report("day")) == [
        (("2026-08-01",), 1), (("2026-08-02",), 5), (("2026-08-03",), 1)]
    [alice] = [r for r in (await reports.report("user")).rows if r.key["user"] == "U1"]
    assert alice.usage == UsageTotals(3, 300, 30, 120, 0.75)
    assert alice.key == {"platform": "slack", "user": "U1"}


async def test_a_range_of_days_and_a_platform_narrow_the_calls(spent: None) -> None:
    day = date(2026, 8, 2)
    assert keyed(await reports.report("user", since=day, until=day)) == [
        (("api", "admin"), 1), (("discord", "D9"), 1), (("slack", "U1"), 2), (("slack", "U2"), 1)]
    assert keyed(await reports.report("model", since=date(2026, 8, 3))) == [(("large",), 1)]
    assert keyed(await reports.report("user", platform="slack", until=day)) == [
        (("slack", "U1"), 3), (("slack", "U2"), 1)]
    assert (await reports.report("user", since=date(2027, 1, 1))).rows == []


@pytest.mark.parametrize("by", list(reports.BY))
async def test_pages_of_one_go_through_every_group_once_in_order(spent: None, by: str) -> None:
    whole = keyed(await reports.report(by))
    paged, cursor = [], None
    while True:
        page = await reports.report(by, limit=1, cursor=cursor)
        paged += keyed(page)
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert paged == whole and len(whole) > 1


@pytest.mark.parametrize("cursor", ["nope", reports.encode_key(["a"]), reports.encode_key(["x", 1])])
async def test_a_cursor_this_report_did_not_make_is_refused(spent: None, cursor: str) -> None:
    with pytest.raises(InvalidInput, match="cursor"):
        await reports.report("user", cursor=cursor)
    with pytest.raises(InvalidInput, match="cursor"):
        await reports.report("day", cursor=reports.encode_key(["not a day"]))


async def test_the_top_spenders_come_most_tokens_first_within_the_days(db: str) -> None:
    for seq in range(1, 4):
        await spend(seq, BOB)  # 3 calls of 110 tokens
    await spend(1, ALICE, message_id=2)
    await spend(2, ALICE, message_id=2, day=3)
    await spend(1, CAROL, message_id=3, day=9)  # after the window
    top = await reports.top("user", date(2026, 8, 1), date(2026, 8, 3), limit=2)
    assert [(r.key["user"], r.usage.tokens) for r in top] == [("U2", 330), ("U1", 220)]
    [only] = await reports.top("user", date(2026, 8, 3), date(2026, 8, 3))
    assert (only.key, only.usage.calls) == ({"platform": "slack", "user": "U1"}, 1)
    assert await reports.top("model", date(2026, 8, 1), date(2026, 8, 9), platform="discord") \
        == [reports.ReportRow({"model": "small"}, UsageTotals(1, 100, 10, 40, 0.25))]
