"""The bounded memories both adapters use to act once on a retried or replayed event."""

from __future__ import annotations

from core.edge.dedupe import Recent, Seen


def test_bounded_memories_forget_the_oldest() -> None:
    recent: Recent[int, str] = Recent(2)
    recent.put(1, "a")
    recent.put(2, "b")
    recent.get(1)
    recent.put(3, "c")
    assert 2 not in recent and recent.get(1) == "a" and recent.get(3) == "c"
    seen = Seen(2)
    assert seen.first("m1") and not seen.first("m1") and seen.first("m2") and seen.first("m3")
    assert seen.first("m1"), "forgotten after two newer ones"
