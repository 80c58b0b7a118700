"""Discord answering 503 or hanging for a minute while a run finishes (issue 8 §4): each of the
adapter's outboxes meeting it (the turn's messages, the reaction on the person's message)
backs off (a handful of writes in that minute, each after a longer pause, not a tight loop),
then delivers the final state once Discord answers: the answer with its buttons, once, and ✅.

The fake Discord and the bot's budget share a clock 20 times faster than real time, so a
minute of outage and its 30-second pauses take a few real seconds. How many writes meet it
depends on when each outbox first met it (real scheduling), so the writes are counted per
outbox, each bounded by the pauses' schedule, and the pauses themselves are measured."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from itertools import pairwise

import pytest

from core.edge.backoff import Backoff
from core.runtime.pool import RunPool
from tests.bots.discord.harness import (
    answered,
    bot_messages,
    button,
    fast_limiter,
    mention,
    running_bot,
    showing,
)
from tests.fakes.discordfake import FakeDiscord, Limits, Outage
from tests.fakes.fake_bridge import FakeBridge, Stall, ev
from tests.fakes.changes import WAIT

SPEED = 20.0
MINUTE = 60.0  # on the shared clock
TIMEOUT = 0.5  # real seconds before the bot gives up on a hanging write (10 on the clock)
# Pauses of 1, 2, 4, 8, 16, 30 s (the channel budgets' backoff): the sixth write of one
# outbox comes 31 s after its first, the seventh 61 s after, past the minute. So at most six
# writes of each outbox meet it, however late the first met it; a tight loop would make hundreds.
PAUSES = Backoff()
MOST_WRITES = 6
ANSWER = "The answer, delivered late."
MESSAGE_WRITES = ("POST /channels/{channel_id}/messages",
                  "PATCH /channels/{channel_id}/messages/{message_id}")
REACT = "PUT /channels/{channel_id}/messages/{message_id}/reactions/{emoji}/@me"
REACTION_WRITES = ("* /channels/{channel_id}/messages/{message_id}/reactions/{emoji}/@me",)


@pytest.fixture
async def quick_fake() -> AsyncIterator[FakeDiscord]:
    """Discord's real limits, on a clock SPEED times faster (the bot's budget runs on it too).
    No rate-limit headers: discord.py would wait out their windows in real seconds."""
    limits = Limits(rate_limit_headers=False)
    async with FakeDiscord(limits=limits, clock=lambda: time.monotonic() * SPEED) as server, \
            server.patch_discord():
        yield server
        assert server.rate_limited == [], "the bot's own budget must keep it clear of 429s"


def writes_of(outage: Outage, routes: tuple[str, ...]) -> list[float]:
    """When the writes of `routes` met the outage, in order."""
    return sorted(at for route in routes for at in outage.met_at(route))


def backed_off(writes: list[float]) -> bool:
    """Each write after the first came at least its pause after the one before."""
    return all(later - earlier >= PAUSES.delay(failures)
               for failures, (earlier, later) in enumerate(pairwise(writes), start=1))


async def finish_during_an_outage(quick_fake: FakeDiscord, fake_runs: RunPool,
                                  fake_bridge: FakeBridge, hang: bool) -> None:
    fake = quick_fake
    fake_bridge.default_script = lambda run_id: [
        ev("text", text="thinking it over"), Stall("hold"), ev("text", text=" and done"),
        ev("done", final_text=ANSWER),
    ]
    eyes = fake.hang_next(REACT)  # 👀 is held until Discord is down: both outboxes meet it
    async with running_bot(fake, fake_runs, limiter=fast_limiter(SPEED), write_timeout=TIMEOUT):
        asked = await fake.send_user_message(mention(fake, "answer me"))
        thread = int(asked["id"])
        await fake.wait_until(lambda: showing(fake, thread, "thinking it over") and eyes.arrived,
                              WAIT, "live turn, 👀 on its way")
        outage = fake.outage(MINUTE, hang=hang)
        eyes.release()
        fake_bridge.release("hold")
        await fake.wait_until(lambda: answered(fake, thread, ANSWER), WAIT, "the final answer")
        assert fake.core.clock() >= outage.until, "delivered only once Discord answered again"
        await fake.wait_until(lambda: fake.reactions_on(thread) == ["✅"], WAIT, "✅ after the outage")
    messages, reactions = writes_of(outage, MESSAGE_WRITES), writes_of(outage, REACTION_WRITES)
    assert outage.met == len(messages) + len(reactions), f"other calls met it: {outage.calls}"
    for outbox, writes in (("message", messages), ("reaction", reactions)):
        assert 2 <= len(writes) <= MOST_WRITES, f"{len(writes)} {outbox} writes during the outage"
        assert backed_off(writes), f"{outbox} writes at {writes}: not after pauses of {PAUSES}"
    [final] = bot_messages(fake, thread)  # nothing repeated
    assert button(final, "Regenerate") and button(final, "Show thinking")


async def test_a_minute_of_503s_then_the_final_answer_arrives(
    quick_fake: FakeDiscord, fake_runs: RunPool, fake_bridge: FakeBridge
) -> None:
    await finish_during_an_outage(quick_fake, fake_runs, fake_bridge, hang=False)


async def test_a_minute_of_hanging_writes_times_out_backs_off_and_delivers(
    quick_fake: FakeDiscord, fake_runs: RunPool, fake_bridge: FakeBridge
) -> None:
    await finish_during_an_outage(quick_fake, fake_runs, fake_bridge, hang=True)
