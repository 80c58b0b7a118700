"""Coalescing and Slack's rate limits, on a clock the test moves (no waiting for time to pass):
the fake Bridge plays a run one event at a time while the clock advances 0.1 s per event."""

from __future__ import annotations

import asyncio
import itertools
import math
import re
from contextlib import asynccontextmanager
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from core.agent.bridge.client import BridgeClient
from core.runtime.pool import RunPool
from tests.bots.slack.clocks import SteppedClock
from bots.slack import ids
from bots.slack.delivery import budgets
from bots.slack.delivery.sender import PACE
from tests.bots.slack.harness import Harness, has_button, running, texts
from tests.fakes.fake_bridge import FakeBridge, Stall, ev
from tests.fakes.slack import FakeSlack
from tests.fakes.slack_payloads import CHANNEL_ID, TEAM_ID
from tests.support.runtime import FAST, catalogue_for
from tests.fakes.changes import WAIT

STEP = 0.1  # seconds of clock per event


@dataclass
class Timed:
    clock: SteppedClock
    slack: FakeSlack
    h: Harness
    bridge: FakeBridge


@asynccontextmanager
async def on_a_stepped_clock(fake_bridge: FakeBridge, skills_dir: Path, max_active_runs: int,
                             streaming: bool) -> AsyncIterator[Timed]:
    clock = SteppedClock()
    async with BridgeClient(fake_bridge.url, policy=FAST) as client, FakeSlack(clock=clock) as slack:
        slack.streaming = streaming
        pool = RunPool(client, catalogue_for(None, skills_dir), max_active_runs=max_active_runs)
        await pool.open()
        try:
            async with running(slack, pool, clock) as h:
                yield Timed(clock, slack, h, fake_bridge)
        finally:
            await pool.close()


@pytest.fixture
async def timed(db: str, fake_bridge: FakeBridge, skills_dir: Path) -> AsyncIterator[Timed]:
    """The edit-based live message (streams: test_streaming.py), ten runs at a time."""
    async with on_a_stepped_clock(fake_bridge, skills_dir, 10, streaming=False) as timed:
        yield timed


def paced_script(steps: int, final: str) -> tuple[list[Any], list[int]]:
    """`steps` events, each held until the test releases it; the seq of each."""
    items: list[Any] = []
    seqs: list[int] = []
    for i in range(steps):
        items.append(Stall(f"s{i}"))
        if i % 60 == 0:
            items.append(ev("tool_start", tool_call_id=f"t{i}", tool_name="search", args={"q": i}))
        items.append(ev("text", text=f"token {i} "))
        seqs.append(sum(1 for item in items if isinstance(item, tuple)))
    return [*items, ev("done", final_text=final)], seqs


async def poll(predicate: Callable[[], Any]) -> Any:
    async with asyncio.timeout(WAIT):
        while not (value := predicate()):
            await asyncio.sleep(0.001)
    return value


async def advance_until(clock: SteppedClock, predicate: Callable[[], Any]) -> Any:
    """Move the clock a step at a time until `predicate()` holds (what waits on it can go on)."""
    async with asyncio.timeout(WAIT):
        while not (value := predicate()):
            clock.advance(STEP)
            await asyncio.sleep(0.002)
    return value


async def play(t: Timed, steps: int, seqs: list[int], runs: list[str]) -> None:
    """Release the runs' events one step at a time, the clock moving 0.1 s per step."""
    for i in range(steps):
        t.bridge.release(f"s{i}")
        await poll(lambda seq=seqs[i]: all((v := t.h.pool.view(r)) and v.state.last_seq >= seq for r in runs))
        t.clock.advance(STEP)
        await asyncio.sleep(0)


def edits_of(slack: FakeSlack, ts: str) -> list[Any]:
    return [c for c in slack.calls_to("chat.update") if c.args.get("ts") == ts]


def newest_token(call: Any) -> int:
    return max((int(n) for n in re.findall(r"token (\d+)", str(call.args.get("blocks")))), default=-1)


def answered_in(h: Harness, thread: str, text: str) -> bool:
    return any(text in texts(m) and has_button(m, ids.REGENERATE) for m in h.bot_messages(CHANNEL_ID, thread))


def final_shown(slack: FakeSlack, ts: str, text: str) -> bool:
    return text in texts(slack.message(CHANNEL_ID, ts))


async def test_a_30_second_run_makes_at_most_31_edits_and_no_429(timed: Timed) -> None:
    script, seqs = paced_script(300, "Finished after thirty seconds.")
    timed.bridge.default_script = lambda run_id: list(script)
    thread = (await timed.h.event("app_mention", text="a long job"))["ts"]
    [run] = await poll(lambda: timed.h.pool.active())
    live = await poll(lambda: timed.h.bot_messages(CHANNEL_ID, thread))
    await play(timed, 300, seqs, [run.run_id])
    await advance_until(timed.clock, lambda: final_shown(timed.slack, live[0].ts, "Finished after thirty"))

    edits = edits_of(timed.slack, live[0].ts)
    print(f"\n30 s run: {len(edits)} chat.update calls, {timed.slack.ratelimited} rate-limited")
    assert 20 <= len(edits) <= 31
    assert timed.slack.ratelimited == 0
    gaps = [b.at - a.at for a, b in itertools.pairwise(edits)]
    assert min(gaps) >= 1.0, "two edits of one message within a second"
    shown = [newest_token(c) for c in edits[:-1]]
    assert shown == sorted(shown) and shown[-1] >= 299 - 15  # each edit showed the state of its time


async def test_ten_concurrent_runs_share_the_workspace_budget(timed: Timed) -> None:
    script, seqs = paced_script(300, "Done together.")
    timed.bridge.default_script = lambda run_id: list(script)
    threads = [(await timed.h.event("app_mention", text=f"job {n}"))["ts"] for n in range(10)]
    runs = await poll(lambda: len(a := timed.h.pool.active()) == 10 and a)
    await advance_until(timed.clock, lambda: all(timed.h.bot_messages(CHANNEL_ID, t) for t in threads))
    await play(timed, 300, seqs, [r.run_id for r in runs])
    lives = [timed.h.bot_messages(CHANNEL_ID, t)[0].ts for t in threads]
    # Each answer in its live message, or (when the update budget was short) in a new one,
    # and then every live message tidied: showing the answer, or gone.
    await advance_until(timed.clock, lambda: all(answered_in(timed.h, t, "Done together.") for t in threads))
    await advance_until(timed.clock, lambda: all(
        (m := timed.slack.message(CHANNEL_ID, ts)).deleted or "Done together." in texts(m) for ts in lives))

    updates = timed.slack.calls_to("chat.update")
    per_message = sorted(len(edits_of(timed.slack, ts)) for ts in lives)
    span = updates[-1].at - updates[0].at
    print(f"\n10 runs: {len(updates)} chat.update in {span:.0f} s, per message {per_message}, "
          f"{timed.slack.ratelimited} rate-limited")
    assert timed.slack.ratelimited == 0
    # Shared fairly: progress edits within 3 of each other, and one more for the answer,
    # which is its message's last edit only when the workspace had a call for it at once
    # (else it is posted beside, and the message deleted).
    assert per_message[0] >= 2 and per_message[-1] - per_message[0] <= 4
    for first in updates:  # never more than Slack's Tier 3 (50 in any minute)
        assert len([c for c in updates if first.at <= c.at < first.at + 60]) <= 50


async def test_a_429_is_waited_out_and_the_final_state_still_sent(timed: Timed) -> None:
    script, seqs = paced_script(40, "Made it.")
    timed.bridge.default_script = lambda run_id: list(script)
    timed.slack.ratelimit("chat.update", times=1, retry_after=5)
    thread = (await timed.h.event("app_mention", text="go"))["ts"]
    [run] = await poll(lambda: timed.h.pool.active())
    live = await poll(lambda: timed.h.bot_messages(CHANNEL_ID, thread))
    await play(timed, 40, seqs, [run.run_id])
    await advance_until(timed.clock, lambda: final_shown(timed.slack, live[0].ts, "Made it."))

    edits = edits_of(timed.slack, live[0].ts)
    assert edits[0].status == 429 and timed.slack.ratelimited == 1
    assert edits[1].at - edits[0].at >= 5.0  # Retry-After honoured
    assert all(c.status == 200 for c in edits[1:])


async def test_a_progress_edit_tried_again_after_its_run_ended_is_the_answer(timed: Timed) -> None:
    """A progress edit refused 429 is tried again only once the run has ended: rendered then,
    it shows the answer, in the turn's own message; the answer is not posted a second time
    (nor its message deleted under a click on it)."""
    script, seqs = paced_script(5, "Answered once.")
    timed.bridge.default_script = lambda run_id: list(script)
    timed.slack.ratelimit("chat.update", times=1, retry_after=1)
    thread = (await timed.h.event("app_mention", text="go"))["ts"]
    [run] = await poll(lambda: timed.h.pool.active())
    [live] = await poll(lambda: timed.h.bot_messages(CHANNEL_ID, thread))
    await poll(lambda: timed.slack.ratelimited == 1)  # the first progress edit waits to retry
    await play(timed, 5, seqs, [run.run_id])
    await poll(lambda: (v := timed.h.pool.view(run.run_id)) and v.finished)
    await advance_until(timed.clock, lambda: final_shown(timed.slack, live.ts, "Answered once."))
    idle = asyncio.ensure_future(timed.h.bot.idle())
    await advance_until(timed.clock, idle.done)

    [retried] = [c for c in edits_of(timed.slack, live.ts) if c.status == 200]
    assert "Answered once." in str(retried.args["blocks"])  # the retry rendered the answer
    assert [m.ts for m in timed.h.bot_messages(CHANNEL_ID, thread)] == [live.ts]
    assert len(timed.slack.calls_to("chat.postMessage")) == 1  # the live message only
    assert not timed.slack.calls_to("chat.delete")


async def test_a_finished_answer_goes_ahead_of_the_other_runs_progress_edits(timed: Timed) -> None:
    """Ten runs share the workspace's chat.update budget (~0.75/s): their progress edits queue
    for it. The run that finishes first shows its answer within a couple of seconds, not after
    the queue (some 12 s here)."""
    long, seqs = paced_script(300, "Still going.")
    short, _ = paced_script(40, "Quick answer.")
    scripts = iter([short, *[long] * 9])
    timed.bridge.default_script = lambda run_id: list(next(scripts))
    threads = [(await timed.h.event("app_mention", text=f"job {n}"))["ts"] for n in range(10)]
    runs = await poll(lambda: len(a := timed.h.pool.active()) == 10 and a)
    await advance_until(timed.clock, lambda: all(timed.h.bot_messages(CHANNEL_ID, t) for t in threads))
    await play(timed, 40, seqs, [r.run_id for r in runs])
    quick = await poll(lambda: next((v for r in runs if (v := timed.h.pool.view(r.run_id)).finished), None))
    ended_at = timed.clock.now
    # In its live message, or (its budget short) posted beside it: either way, at once.
    shown = await advance_until(timed.clock, lambda: next(
        (t for t in threads if answered_in(timed.h, t, "Quick answer.")), None))
    waited = timed.clock.now - ended_at
    print(f"\nthe finished answer showed {waited:.1f} s (clock) after its run ended")
    assert shown and quick.status.name == "SUCCESS"
    assert waited <= 3.0
    assert timed.slack.ratelimited == 0
    for run in runs:
        if run.run_id != quick.run_id:
            await timed.h.pool.stop(run.run_id)


async def test_beyond_ten_live_messages_a_turn_shows_its_progress_as_the_threads_status(
        timed: Timed) -> None:
    """Ten runs hold the workspace's ten edited live messages; an eleventh turn (queued here)
    posts its message once and shows what it does as the thread's loading status; stopped,
    every turn ends in its final state, nothing left showing Stop."""
    script, _ = paced_script(300, "Never reached.")
    timed.bridge.default_script = lambda run_id: list(script)
    threads = [(await timed.h.event("app_mention", text=f"job {n}"))["ts"] for n in range(11)]
    await advance_until(timed.clock, lambda: all(timed.h.bot_messages(CHANNEL_ID, t) for t in threads))
    # Whichever turn came eleventh to the workspace's budget (not always the last mention).
    [(beyond, eleventh)] = [(t, m) for t in threads for m in timed.h.bot_messages(CHANNEL_ID, t)
                            if "Working on it" in texts(m)]
    assert has_button(eleventh, ids.STOP)

    def status_of(thread: str) -> list[Any]:
        return [c for c in timed.slack.calls_to("assistant.threads.setStatus")
                if c.args.get("thread_ts") == thread and c.ok]
    [status, *_] = await advance_until(timed.clock, lambda: status_of(beyond))
    # What that turn does: it waits in line (the eleventh run), or thinks (one of the ten).
    assert status.args["loading_messages"] in (["Waiting in line…"], ["Thinking…"])
    assert not edits_of(timed.slack, eleventh.ts)  # no progress edits of that message

    for run in timed.h.pool.active():
        await timed.h.pool.stop(run.run_id)
    await advance_until(timed.clock, lambda: all(answered_in(timed.h, t, "Stopped") for t in threads))
    await advance_until(timed.clock, lambda: not any(
        has_button(m, ids.STOP) for t in threads for m in timed.h.bot_messages(CHANNEL_ID, t)))
    assert timed.slack.ratelimited == 0


def answered_in_channel(h: Harness, channel: str, thread: str, text: str) -> bool:
    return any(text in texts(m) and has_button(m, ids.REGENERATE) for m in h.bot_messages(channel, thread))


BUNCH = [f"CBUNCH{n}" for n in range(10)]


async def ten_ending_together(t: Timed, final: str,
                              before_the_end: Callable[[], Awaitable[None]] | None = None,
                              steps: int = 40) -> tuple[list[str], list[str], float]:
    """Ten turns of one workspace, each in its own channel (as in bench.load), whose runs end
    at the same instant after `steps` / 10 s of progress (`before_the_end` is called just
    before); their channels, threads and the clock at the end."""
    script, seqs = paced_script(steps, final)
    t.bridge.default_script = lambda run_id: list(script)
    channels = BUNCH
    threads = [(await t.h.event("app_mention", channel=c, text="job"))["ts"] for c in channels]
    runs = await poll(lambda: len(a := t.h.pool.active()) == 10 and a)
    await advance_until(t.clock, lambda: all(t.h.bot_messages(c, th) for c, th in zip(channels, threads, strict=True)))
    await play(t, steps - 1, seqs, [r.run_id for r in runs])
    if before_the_end is not None:
        await before_the_end()
    t.bridge.release(f"s{steps - 1}")  # the last step, then `done`
    await poll(lambda: all((v := t.h.pool.view(r.run_id)) and v.finished for r in runs))
    return channels, threads, t.clock.now


async def test_progress_edits_leave_the_calls_their_answers_will_need(timed: Timed) -> None:
    """Ten edited live messages of one workspace follow their runs for 8 s: they would spend
    Tier 3's window on progress (some 70 edits) but leave one chat.update for each turn in
    flight, and for as many as ten turns begun within a second would bring in a window at
    that pace (sender.PACE). Their runs end in the same instant: each answer shows at once
    in its own message, nothing is posted beside it, nothing deleted."""
    progress: list[int] = []

    async def count_progress() -> None:
        progress.append(len(timed.slack.calls_to("chat.update")))

    channels, threads, ended_at = await ten_ending_together(timed, "All in place.", count_progress,
                                                            steps=80)
    # the window's calls but those the ten turns' pace promises
    assert progress == [budgets.TIER_3.burst - math.ceil(10 * budgets.MINUTE / PACE)]

    await advance_until(timed.clock, lambda: all(
        answered_in_channel(timed.h, c, th, "All in place.") for c, th in zip(channels, threads, strict=True)))
    assert timed.clock.now - ended_at <= 1.5
    for channel, thread in zip(channels, threads, strict=True):
        [live] = timed.h.bot_messages(channel, thread)  # the answer in the live message itself
        assert "All in place." in texts(live) and not has_button(live, ids.STOP)
    assert len(timed.slack.calls_to("chat.postMessage")) == 10 and not timed.slack.calls_to("chat.delete")
    assert timed.slack.ratelimited == 0


async def test_answers_ending_together_show_at_once_though_the_update_budget_is_spent(
        timed: Timed) -> None:
    """Ten edited live messages end in the same instant just after other calls (another
    replica's answers) spent the workspace's chat.update window. Each answer is visible at
    once (posted beside its message, whose budget is per channel), not after a queue of ten
    answers for that window (a minute at Tier 3); then every live message is tidied."""
    sender = timed.h.bot.services.sender

    async def others_spend_the_window() -> None:
        while await sender.limiter.try_take(*budgets.updates(TEAM_ID)[0], urgent=True):
            pass

    channels, threads, ended_at = await ten_ending_together(timed, "All done.", others_spend_the_window)
    await advance_until(timed.clock, lambda: all(
        answered_in_channel(timed.h, c, th, "All done.") for c, th in zip(channels, threads, strict=True)))
    waited = timed.clock.now - ended_at
    print(f"\nten answers ending together: all visible {waited:.1f} s (clock) after the runs ended")
    assert waited <= 1.5
    await advance_until(timed.clock, lambda: not any(
        has_button(m, ids.STOP) for c, th in zip(channels, threads, strict=True) for m in timed.h.bot_messages(c, th)))
    assert timed.slack.ratelimited == 0


async def test_streamed_answers_ending_together_show_at_once_though_stop_stream_is_spent(
        timed: Timed) -> None:
    """The same with streamed turns, the workspace's chat.stopStream (Tier 2) budget spent
    (by other turns' stops): each answer is posted beside its stream at once, and the stream
    is stopped later (it ends final, its tasks readable)."""
    timed.slack.streaming = True
    sender, streams = timed.h.bot.services.sender, []

    async def other_turns_stop() -> None:
        streams.extend(m for c in BUNCH for m in timed.slack.history(c) if m.streaming)
        while await sender.limiter.try_take(*budgets.stop_stream(TEAM_ID)[0]):
            pass  # other turns' stops took every call there was

    channels, threads, ended_at = await ten_ending_together(timed, "Streamed and done.", other_turns_stop)
    assert streams  # the Tier 2 burst let some turns stream

    await advance_until(timed.clock, lambda: all(
        answered_in_channel(timed.h, c, th, "Streamed and done.") for c, th in zip(channels, threads, strict=True)))
    waited = timed.clock.now - ended_at
    assert waited <= 1.5
    await advance_until(timed.clock, lambda: not any(m.streaming for m in streams))
    assert timed.slack.ratelimited == 0


async def test_a_burst_opens_only_the_agent_sessions_the_workspace_can_close_at_once(
        timed: Timed) -> None:
    """Thirty turns of one workspace at once (ten running, twenty queued): each would open
    its thread's agent session (`processing`, Slack's native Stop) and close it (`active`)
    when its run ends, two agents.sessions.setStatus calls of Tier 3's 48. Sessions open only
    while the window keeps a call for closing each open one: 24 open, and each closes as its
    answer shows (not when the window has room again), none left showing a Stop for long."""
    timed.bridge.default_script = lambda run_id: [Stall("go"), ev("done", final_text="Closed.")]
    channels = [f"CSESSION{n}" for n in range(30)]
    threads = [(await timed.h.event("app_mention", channel=c, text="job"))["ts"] for c in channels]
    # The clock stands still while the turns open (however long the machine takes, no call
    # leaves the window meanwhile): each tries its session once, at once.
    await poll(lambda: all(timed.h.bot_messages(c, th) for c, th in zip(channels, threads, strict=True)))

    def statuses(status: str) -> list[Any]:
        return [c for c in timed.slack.calls_to("agents.sessions.setStatus")
                if c.args.get("status") == status and c.ok]
    await poll(lambda: len(statuses("processing")) >= 24)
    timed.bridge.release("go")
    await advance_until(timed.clock, lambda: all(
        answered_in_channel(timed.h, c, th, "Closed.") for c, th in zip(channels, threads, strict=True)))
    idle = asyncio.ensure_future(timed.h.bot.idle())
    await advance_until(timed.clock, idle.done)

    sessions, most = set(), 0
    for call in timed.slack.calls_to("agents.sessions.setStatus"):  # open at once, at most
        (sessions.add if call.args["status"] == "processing" else sessions.discard)(call.args["channel_id"])
        most = max(most, len(sessions))
    assert most == 24 and not sessions
    answered_at = {c.args["channel"]: c.at for c in timed.slack.calls
                   if c.method in ("chat.update", "chat.postMessage") and "Closed." in str(c.args)}
    for closed in statuses("active"):
        assert closed.at - answered_at[closed.args["channel_id"]] < 30  # not for the window (62 s)
    assert timed.slack.ratelimited == 0


async def test_an_old_live_message_is_made_final_by_whichever_tier_3_budget_frees_first(
        timed: Timed) -> None:
    """Ten turns' answers are posted beside their live messages (other calls spent the
    workspace's chat.update window before their runs began); the chat.delete window is spent
    too when they end. The old messages do not wait for chat.delete: the first chat.update
    calls that leave their window make them final ("the answer is below"), none left
    showing Stop."""
    sender = timed.h.bot.services.sender

    async def spend(limits: list[budgets.Budget]) -> None:
        while await sender.limiter.try_take(*limits[0], urgent=True):
            pass

    await spend(budgets.updates(TEAM_ID))
    update_spent_at = timed.clock.now

    async def delete_spent() -> None:
        await spend(budgets.delete(TEAM_ID))
    channels, threads, _ = await ten_ending_together(timed, "Beside.", delete_spent)
    await advance_until(timed.clock, lambda: all(
        answered_in_channel(timed.h, c, th, "Beside.") for c, th in zip(channels, threads, strict=True)))
    lives = [m for c, th in zip(channels, threads, strict=True) for m in timed.h.bot_messages(c, th)
             if has_button(m, ids.STOP)]
    assert len(lives) == 10  # each answer posted beside its live message
    await advance_until(timed.clock, lambda: not any(
        has_button(m, ids.STOP) for c, th in zip(channels, threads, strict=True) for m in timed.h.bot_messages(c, th)))

    retired = [c for c in timed.slack.calls_to("chat.update") if "answer is below" in str(c.args)]
    assert len(retired) == 10 and not timed.slack.calls_to("chat.delete")
    assert all(c.at < update_spent_at + budgets.MINUTE + 1 for c in retired)
    assert timed.slack.ratelimited == 0


async def test_a_burst_streams_as_many_turns_as_tier_2_allows_the_first_to_ask_first(
        timed: Timed) -> None:
    """25 turns of one workspace at once: Tier 2 lets 20 streams start within its minute;
    the first 20 to ask stream, the other five take edit-based live messages, none waits
    and nothing is refused 429. Then each stream stops with its answer."""
    timed.slack.streaming = True
    timed.bridge.default_script = lambda run_id: [Stall("go"), ev("done", final_text="Burst done.")]
    channels = [f"CBURST{n:02d}" for n in range(25)]
    threads = [(await timed.h.event("app_mention", channel=c, text="job"))["ts"] for c in channels]
    await advance_until(timed.clock, lambda: all(
        timed.h.bot_messages(c, th) for c, th in zip(channels, threads, strict=True)))

    started = [c.args["channel"] for c in timed.slack.calls_to("chat.startStream") if c.ok]
    assert sorted(started) == channels[:20]
    edited = [c for c in channels[20:] if not any(m.streaming for m in timed.slack.history(c))]
    assert edited == channels[20:]
    timed.bridge.release("go")
    await advance_until(timed.clock, lambda: all(
        answered_in_channel(timed.h, c, th, "Burst done.") for c, th in zip(channels, threads, strict=True)))
    await advance_until(timed.clock, lambda: not any(
        m.streaming or has_button(m, ids.STOP) for c in channels for m in timed.slack.history(c)))
    assert len([c for c in timed.slack.calls_to("chat.stopStream") if c.ok]) == 20
    assert timed.slack.ratelimited == 0


async def test_turns_try_to_stream_in_the_order_their_runs_began() -> None:
    """A turn whose reads took longer keeps its place; one held up past its wait loses it."""
    clock = SteppedClock()
    turns = budgets.StreamTurns(wait=1.0, sleep=clock.sleep)
    first, second, third = turns.ticket(), turns.ticket(), turns.ticket()
    tried: list[int] = []

    async def tries(ticket: int) -> None:
        await turns.turn(ticket)
        tried.append(ticket)
        turns.done(ticket)

    later = [asyncio.ensure_future(tries(t)) for t in (third, second)]
    await asyncio.sleep(0)
    assert tried == []  # both wait for the first
    await tries(first)
    await asyncio.gather(*later)
    assert tried == [first, second, third]
    stuck, after = turns.ticket(), turns.ticket()
    waiting = asyncio.ensure_future(turns.turn(after))
    for _ in range(10):  # it starts waiting (its wait is measured from then)
        await asyncio.sleep(0)
    clock.advance(0.9)
    for _ in range(10):
        await asyncio.sleep(0)
    assert not waiting.done()  # the stuck one is waited for, up to the wait
    clock.advance(0.1)
    async with asyncio.timeout(WAIT):
        await waiting  # ... and not beyond it: it never tries
    turns.done(stuck)
    turns.done(stuck)  # again: nothing


@pytest.fixture
async def five_at_a_time(db: str, fake_bridge: FakeBridge, skills_dir: Path) -> AsyncIterator[Timed]:
    """Streams on, five runs at a time (MAX_ACTIVE_RUNS' default, as bench.load)."""
    async with on_a_stepped_clock(fake_bridge, skills_dir, 5, streaming=True) as timed:
        yield timed


async def test_a_ramp_of_a_hundred_turns_leaves_no_live_message_working_after_the_last_answer(
        five_at_a_time: Timed) -> None:
    """bench.load's ramp, Slack's half, on the clock: 100 turns of one workspace ask at five a
    second (a channel each) and their runs end at two a second, faster than Tier 3 makes
    messages final (48 chat.update and 48 chat.delete a window). Twenty stream; the others'
    answers take their own message while the update window has calls, else are posted beside
    it and the old one deleted. Progress edits in the first seconds must not spend what the
    later answers need: every live message is final within 3 s of the last answer (16.8 s
    when progress left only the calls promised to the turns begun so far)."""
    t, turns, started = five_at_a_time, 100, itertools.count()

    def script(run_id: str) -> list[Any]:
        n = next(started)  # runs start in the order they were asked
        return [ev("tool_start", tool_call_id="t1", tool_name="todo", args={}),
                ev("text", text="thinking "), Stall(f"go{n}"), ev("done", final_text=f"Answer {n}.")]
    t.bridge.default_script = script
    channels = [f"CRAMP{n:03d}" for n in range(turns)]
    threads: dict[str, str] = {}
    begin, released = t.clock.now, 0

    def all_answered() -> bool:
        return all(answered_in_channel(t.h, c, th, "Answer") for c, th in threads.items())

    async with asyncio.timeout(WAIT * 2):
        while released < turns or len(threads) < turns or not all_answered():
            elapsed = t.clock.now - begin
            while len(threads) < turns and len(threads) / 5 <= elapsed:
                channel = channels[len(threads)]
                threads[channel] = (await t.h.event("app_mention", channel=channel, text="job"))["ts"]
            while released < turns and released / 2 <= elapsed - 1.0:
                t.bridge.release(f"go{released}")
                released += 1
            t.clock.advance(STEP)
            await asyncio.sleep(0.02)  # the clock at about five times real time, as FastClock
    answered_at = t.clock.now

    def working() -> list[Any]:
        return [m for c in channels for m in t.slack.history(c)
                if m.bot_id and (m.streaming or has_button(m, ids.STOP))]
    await advance_until(t.clock, lambda: not working())
    print(f"\n100 turns, the last answered at {answered_at - begin:.1f} s (clock): every live "
          f"message final {t.clock.now - answered_at:.1f} s after it")
    assert t.clock.now - answered_at <= 3.0
    assert t.slack.calls_to("chat.delete")  # the update window was short: some answers beside
    assert len([c for c in t.slack.calls_to("chat.startStream") if c.ok]) == 20
    assert t.slack.ratelimited == 0
