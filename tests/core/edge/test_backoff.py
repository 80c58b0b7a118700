"""Backing off from a platform that is down: the pauses, the bound, the streak per key (pure)."""

from __future__ import annotations

from core.edge.backoff import Backoff, Outages


def test_pauses_double_up_to_the_cap() -> None:
    backoff = Backoff(base=1.0, cap=30.0)
    assert [backoff.delay(n) for n in range(1, 8)] == [1, 2, 4, 8, 16, 30, 30]
    assert backoff.waited(6) == 61


def test_a_streak_gives_up_once_its_patience_is_spent_then_starts_again() -> None:
    outages = Outages(Backoff(base=1.0, cap=4.0, patience=10.0))
    pauses = [outages.failed("slack:T1:chat.update") for _ in range(5)]
    assert pauses == [1, 2, 4, None, 1]  # 1+2+4+4 > 10: the fourth failure is one too many


def test_keys_have_their_own_streak_and_a_success_ends_one() -> None:
    outages = Outages(Backoff(base=1.0, cap=30.0))
    assert [outages.failed("a"), outages.failed("a"), outages.failed("b")] == [1, 2, 1]
    outages.recovered("a")
    assert outages.failed("a") == 1
