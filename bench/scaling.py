"""Slack conversations per minute at a fixed first-reply p99, with 1, 2 and 3 `serve` replicas
and 1 and 2 Bridges, as ratios to one replica with one Bridge.

    .venv/bin/python -m bench.scaling [--quick] [--target-p99 2.0] [--rounds 1]

Each configuration is real processes on a fresh PostgreSQL database: N `hermes-chat serve`
replicas, each serving its own Slack HTTP events route, and M Bridges (`python -m bridge`,
listed in HERMES_BRIDGE_URL). This process hosts the fakes (bench/load's world: the scripted
model, the fake Slack with its rate limits on real time) and the users, who send each new
conversation's message (a signed `app_mention` in a channel of its own, bench/load's drive) to
the replicas in turn, as a load balancer would. Slack only: the bench drives Slack's events
route (Discord's sharding across replicas is tested in tests/hermes_chat/test_scaleout_e2e.py).

Per configuration, after one unrecorded `@hermes help` per replica and four conversations per
Bridge (bolt's token check, the agent's import), the offered rate steps up (x1.4 from
`--start-rate` conversations a minute, each step `--step-seconds` of arrivals spread evenly); a
step holds when every one of its conversations got its first reply (user's message sent -> the
fake received the bot's first post there, bench/load's observer) and their p99 is within the
target. The figure is the highest rate that held. Conversations of earlier steps still run
during later ones (sustained load rising). Configurations run one after another within a round;
with `--rounds` > 1 each figure is the median of its rounds.

It also checks that nothing broke: every answer shown by the end is its own conversation's
(else it exits 1). The fake Slack's 429s are printed by method, not counted as a failure: the
replicas spend one set of Slack budgets per workspace (the `rate_budget` table), so there
should be none; a 429 is still retried after its Retry-After.
On this 2-core machine the replicas share the same two cores, so more replicas cannot add CPU:
the ratios show the cost of coordination (leases, the event-once claim, LISTEN/NOTIFY) and that
nothing breaks, not horizontal scaling.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import asdict, dataclass, field
from itertools import count
from pathlib import Path

import httpx

from bench.admin import percentile
from bench.load.__main__ import database
from bench.load.drive import POLL_SECONDS, ask_on_slack, warm_up_slack
from bench.load.observer import Observer
from bench.load.world import SIGNING_SECRET, SLACK_TOKEN, World, add_slack_conversation, running_world
from bridge.hermes_home import DEFAULT_CONFIG_YAML
from core.store import db
from tests.faults.bridge_child import BridgeChild
from tests.support.replicas import Replica, replica

BRIDGE_TOKEN = "scaling-bench-token"
FIRST_REPLY_WAIT = 30.0  # seconds a step's last first reply may take before the step failed
ANSWER_WAIT = 10.0  # seconds after the last step for answers still queued to be shown
WARM_UP_DEADLINE = 120.0
WARM_UPS_PER_BRIDGE = 4  # sessions are placed by hashing: 4 miss a Bridge 1 time in 128


@dataclass
class Step:
    rate: float  # offered conversations per minute
    conversations: int
    replied: int
    p99_s: float | None  # None: not every conversation got a first reply


@dataclass
class Outcome:
    replicas: int
    bridges: int
    held_per_minute: float  # the highest offered rate whose first-reply p99 met the target
    steps: list[Step] = field(default_factory=list)
    asked: int = 0
    answered: int = 0  # answers shown by the end of the configuration
    wrong_answers: int = 0
    rate_limited: dict[str, int] = field(default_factory=dict)  # 429s by Slack method

    @property
    def ceiling_reached(self) -> bool:
        return bool(self.steps) and self.steps[-1].rate > self.held_per_minute


@dataclass
class Plan:
    replicas: list[int]
    bridges: list[int]
    target_p99: float
    start_rate: float
    factor: float
    step_seconds: float
    max_steps: int
    rounds: int


async def measure(plan: Plan, replicas: int, bridges: int) -> Outcome:
    """One configuration on a fresh database and fresh processes."""
    with tempfile.TemporaryDirectory(prefix="hermes-scaling-") as home:
        async with database(None) as url, running_world(0) as world, \
                _processes(world, url, Path(home), replicas, bridges) as urls, \
                httpx.AsyncClient(timeout=60) as http:
            numbers = count(1, 2)  # odd: bench/load's Slack conversations
            for at, events_url in enumerate(urls, start=1):
                await warm_up_slack(world, http, events_url, answered=at)
            warm = Observer(world)
            warm_ups = [next(numbers) for _ in range(WARM_UPS_PER_BRIDGE * bridges)]
            await _offer(world, warm, http, urls, warm_ups, 0.0)
            await _wait(lambda: warm.finished() == len(warm_ups), warm, WARM_UP_DEADLINE)

            observer = Observer(world)
            outcome = Outcome(replicas, bridges, held_per_minute=0.0)
            rate = plan.start_rate
            for _ in range(plan.max_steps):
                step = await _step(world, observer, http, urls, numbers, rate, plan.step_seconds)
                outcome.steps.append(step)
                if step.p99_s is None or step.p99_s > plan.target_p99:
                    break
                outcome.held_per_minute = rate
                rate *= plan.factor
            await _wait(lambda: observer.finished() == len(observer.seen), observer, ANSWER_WAIT)
            seen = list(observer.seen.values())
            outcome.asked = len(seen)
            outcome.answered = observer.finished()
            outcome.wrong_answers = sum(1 for s in seen if s.wrong_answer)
            outcome.rate_limited = observer.rate_limited_by()
            return outcome


@asynccontextmanager
async def _processes(world: World, url: str, home: Path, replicas: int,
                     bridges: int) -> AsyncIterator[list[str]]:
    """The Bridges and the `serve` replicas, started and healthy; each replica's events URL."""
    await db.migrate(url)  # once, before replicas race to it
    models = home / "models.toml"
    models.write_text(f'[[models]]\nid = "scripted"\nmodel = "{world.llm.model}"\n'
                      f'base_url = "{world.llm.base_url}"\ndefault = true\n', encoding="utf-8")
    (home / "skills").mkdir()
    children = []
    try:
        for number in range(bridges):
            bridge_home = home / f"bridge-{number}"
            bridge_home.mkdir()
            (bridge_home / "config.yaml").write_text(DEFAULT_CONFIG_YAML, encoding="utf-8")
            children.append(BridgeChild(bridge_home, token=BRIDGE_TOKEN))
        await asyncio.gather(*(child.start() for child in children))
        settings = {
            "DATABASE_URL": url, "HERMES_BRIDGE_URL": ",".join(c.url for c in children),
            "BRIDGE_TOKEN": BRIDGE_TOKEN, "MODELS_FILE": str(models),
            "SKILLS_DIR": str(home / "skills"), "SLACK_BOT_TOKEN": SLACK_TOKEN,
            "SLACK_SIGNING_SECRET": SIGNING_SECRET, "SLACK_API_URL": world.slack.api_url,
            "LOG_LEVEL": "WARNING",
        }
        async with AsyncExitStack() as stack:
            started: list[Replica] = list(await asyncio.gather(*(
                stack.enter_async_context(replica(f"replica-{n}", home, settings))
                for n in range(replicas))))
            yield [f"{r.url}/slack/events" for r in started]
    finally:
        for child in children:
            await child.kill()


async def _step(world: World, observer: Observer, http: httpx.AsyncClient, urls: list[str],
                numbers: count[int], rate: float, seconds: float) -> Step:
    """`rate` conversations a minute for `seconds`; waits for each one's first reply."""
    mine = [next(numbers) for _ in range(max(1, round(rate * seconds / 60)))]
    await _offer(world, observer, http, urls, mine, 60.0 / rate)
    seen = [observer.seen[n] for n in mine]
    await _wait(lambda: all(s.first_reply_at is not None for s in seen), observer,
                FIRST_REPLY_WAIT)
    replies = [s.first_reply_at - s.asked_at for s in seen if s.first_reply_at is not None]
    p99 = percentile(replies, 0.99) if len(replies) == len(seen) else None
    return Step(rate, len(seen), len(replies), p99)


async def _offer(world: World, observer: Observer, http: httpx.AsyncClient, urls: list[str],
                 numbers: list[int], every: float) -> None:
    """Each conversation's message `every` seconds apart, to the replicas in turn."""
    started = time.monotonic()
    sends = []
    for index, number in enumerate(numbers):
        add_slack_conversation(world, number)
        sends.append(_later(started + index * every, ask_on_slack(
            world, observer, http, urls[number // 2 % len(urls)], number)))
    await asyncio.gather(*sends)


async def _later(at: float, send: Awaitable[None]) -> None:
    await asyncio.sleep(max(0.0, at - time.monotonic()))  # the arrival pattern
    await send


async def _wait(done: Callable[[], bool], observer: Observer, deadline: float) -> None:
    """Reads the fakes' calls until `done()` or `deadline` seconds pass."""
    give_up = time.monotonic() + deadline
    observer.read()
    while not done() and time.monotonic() < give_up:
        await asyncio.sleep(POLL_SECONDS)
        observer.read()


async def run(plan: Plan) -> list[list[Outcome]]:
    """Every configuration, once per round; printed as it goes (on stderr)."""
    rounds = []
    for number in range(1, plan.rounds + 1):
        outcomes = []
        for bridges in plan.bridges:
            for replicas in plan.replicas:
                outcome = await measure(plan, replicas, bridges)
                print(f"round {number}: {_line(outcome)}", file=sys.stderr, flush=True)
                outcomes.append(outcome)
        rounds.append(outcomes)
    return rounds


def _line(outcome: Outcome) -> str:
    steps = ", ".join(f"{s.rate:.0f}/min p99 " + (f"{s.p99_s:.2f}s" if s.p99_s is not None
                                                  else f"{s.replied}/{s.conversations} replied")
                      for s in outcome.steps)
    return f"{outcome.replicas} replica(s), {outcome.bridges} Bridge(s): held " \
           f"{outcome.held_per_minute:.0f}/min [{steps}]; answers shown {outcome.answered}" \
           f"/{outcome.asked}; 429s {outcome.rate_limited or 0}"


def table(plan: Plan, rounds: list[list[Outcome]]) -> str:
    """The medians by configuration, as ratios to one replica with one Bridge (or to the
    first configuration measured when that one is not in the plan)."""
    held = {(o.replicas, o.bridges): [r[i].held_per_minute for r in rounds]
            for i, o in enumerate(rounds[0])}
    medians = {config: statistics.median(values) for config, values in held.items()}
    base = medians.get((1, 1)) or next(iter(medians.values()))
    lines = [f"Slack only (the bench drives Slack's events route); first-reply p99 target "
             f"{plan.target_p99:g} s; offered rate from {plan.start_rate:g}/min x{plan.factor:g} "
             f"per {plan.step_seconds:g} s step; median of {plan.rounds} round(s); every "
             "process shares this machine's cores",
             "| replicas | Bridges | conversations/min held | ratio to 1 replica, 1 Bridge |",
             "|---|---|---|---|"]
    for (replicas, bridges), value in medians.items():
        ratio = f"{value / base:.2f}" if base else "-"
        topped = any(not o.ceiling_reached for r in rounds for o in r
                     if (o.replicas, o.bridges) == (replicas, bridges))
        note = " (every step held: raise --max-steps)" if topped else ""
        lines.append(f"| {replicas} | {bridges} | {value:.0f}{note} | {ratio} |")
    every = [o for r in rounds for o in r]
    limited: dict[str, int] = {}
    for outcome in every:
        for method, times in outcome.rate_limited.items():
            limited[method] = limited.get(method, 0) + times
    lines.append(f"answers shown by the end: {sum(o.answered for o in every)} of "
                 f"{sum(o.asked for o in every)} conversations; answers in the wrong thread: "
                 f"{sum(o.wrong_answers for o in every)}; 429s from the fake Slack: "
                 f"{limited or 0}")
    return "\n".join(lines)


def problems(rounds: list[list[Outcome]]) -> list[str]:
    """What breaks the run: an answer shown in another conversation's thread."""
    return [f"{o.replicas} replica(s), {o.bridges} Bridge(s): {o.wrong_answers} wrong answers"
            for r in rounds for o in r if o.wrong_answers]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="one Bridge, coarser and shorter steps: about 2 minutes")
    parser.add_argument("--replicas", default="1,2,3")
    parser.add_argument("--bridges", default=None, help="default 1,2 (--quick: 1)")
    parser.add_argument("--target-p99", type=float, default=2.0, help="seconds")
    parser.add_argument("--start-rate", type=float, default=120.0, help="conversations a minute")
    parser.add_argument("--factor", type=float, default=None,
                        help="rate increase per step (default 1.4, --quick 2)")
    parser.add_argument("--step-seconds", type=float, default=None, help="default 8 (--quick 5)")
    parser.add_argument("--max-steps", type=int, default=None, help="default 10 (--quick 5)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    plan = Plan(replicas=[int(n) for n in args.replicas.split(",")],
                bridges=[int(n) for n in (args.bridges or ("1" if args.quick else "1,2")).split(",")],
                target_p99=args.target_p99, start_rate=args.start_rate,
                factor=args.factor or (2.0 if args.quick else 1.4),
                step_seconds=args.step_seconds or (5.0 if args.quick else 8.0),
                max_steps=args.max_steps or (5 if args.quick else 10), rounds=args.rounds)
    rounds = asyncio.run(run(plan))
    if args.json:
        print(json.dumps([[asdict(o) for o in r] for r in rounds]))
    else:
        print(table(plan, rounds), flush=True)
    found = problems(rounds)
    for problem in found:
        print(f"problem: {problem}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
