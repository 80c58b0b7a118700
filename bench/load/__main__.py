"""N concurrent conversations through the whole product, half on Slack, half on Discord.

    .venv/bin/python -m bench.load [--conversations 200] [--ramp 0] [--database postgres://...]
    .venv/bin/python -m bench.load --slack-burst [--conversations 30] [--ramp 5]

`--slack-burst` is the one-workspace burst: every conversation on Slack, in the one workspace
(a channel each, one team), 30 new ones within 5 s unless --conversations / --ramp say
otherwise, and the model thinks 2.5 s (THINK) after its tool before the final answer, so the
turns overlap and their stream, status and edit calls meet the workspace's per-method budgets
(Tier 2 for chat.startStream / stopStream, Tier 3 for chat.update, chat.delete and the
statuses) all at once.

The scripted model (tests/fakes/llm_server.py) answers each conversation with a todo call and
a final answer of a few text deltas; the real Bridge runs the agent as a child process (as
`hermes-chat serve` starts it); the run pool, the Slack adapter (events signed and POSTed to
its route over HTTP) and the Discord adapter (MESSAGE_CREATE on the fake gateway) run in this
process, against the fake Slack and fake Discord with their platforms' rate limits on real
time (Slack: chat.update 1/s per message and Tier 3 per workspace, posts 1/s per channel,
the stream methods Tier 2 / Tier 4;
Discord: 5 message writes per 5 s per channel). Each conversation has its own channel and user.
Before the load, one unrecorded run warms the Bridge and one `@hermes help` warms bolt's token
check: a service that has been serving did both long ago.

It prints, for one run:
  completed        answers shown in their own thread and stored as SUCCESS (all must be);
  first reply      user's message sent -> the fake received the first thing the person sees
                   the bot do there: a message, or a turn's first sign (Slack's loading
                   status, Discord's typing; observer.py says why those count);
  event -> persist a Bridge event's arrival in the runtime (its `created_at`) -> the commit
                   of the log batch that holds it, over every event of every run;
  done -> platform the run's `done` event arriving in the runtime -> the fake received the
                   write showing the finished answer (the message with its Regenerate button):
                   the path through the adapter, its rate-limit budget and the platform
                   (for Slack: done -> answer visible, streamed or posted);
  platform calls   every call each fake received during the load / its conversations, by
                   method, and the most calls it received within one second;
  rate-limit       429 answers of both fakes (must be zero), by method;
  slack streamed   Slack conversations whose turn streamed (a chat.startStream answered
                   200 in their channel) / Slack conversations, and how many of those are
                   among as many conversations that asked first (streams go first come,
                   first served);
  slack live msgs  last answer shown -> no Slack message left streaming or showing its Stop
                   button ("final ... after the last answer"; must be within two minutes);
  peak memory      (peak RSS - RSS just before the load) / N, for this process (runtime,
                   adapters and the in-process fakes) and for the Bridge child.
It exits 1 when a check fails: a conversation unanswered or answered with another's text, a
Slack answer counted as shown that its channel no longer shows at the end (the fake's stored
messages), a run not SUCCESS, a 429, or a log row missing or stored twice. The database is a fresh
PostgreSQL database (dropped afterwards) unless --database names another (e.g. sqlite://...).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import asyncpg

from core.config import Settings

from .drive import converse
from .figures import Figures, measure, table
from .memory import added_per_run, reset_peak
from .system import load_settings, running_system
from .world import running_world

ADMIN_URL = "postgres://postgres@127.0.0.1:5432/postgres"


@asynccontextmanager
async def database(url: str | None) -> AsyncIterator[str]:
    """`url` as it is, or a fresh PostgreSQL database dropped on exit."""
    if url is not None:
        yield url
        return
    name = f"hermes_chat_load_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(ADMIN_URL)
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


THINK = 2.5  # seconds the model thinks before each final answer in the one-workspace burst
BURST = (30, 5.0)  # the one-workspace burst's default conversations and seconds


async def run(conversations: int, ramp: float, deadline: float, max_active_runs: int,
              database_url: str | None, slack_burst: bool = False) -> Figures:
    """One load run on a fresh world and system."""
    think = THINK if slack_burst else 0.0
    with tempfile.TemporaryDirectory(prefix="hermes-load-") as home:
        async with database(database_url) as url, \
                running_world(conversations, slack_only=slack_burst, think=think) as world:
            settings = load_settings(world, url, Path(home), max_active_runs)
            async with running_system(settings) as system:
                processes: dict[str, int | str] = {"runtime": "self"}
                if system.bridge_pids:
                    processes["bridge"] = system.bridge_pids[-1]
                baselines = {name: reset_peak(pid) for name, pid in processes.items()}
                observer, seconds = await converse(world, system.events_url, conversations,
                                                   ramp, deadline)
                memory = {name: added_per_run(pid, baselines[name], conversations)
                          for name, pid in processes.items()}
                return await measure(observer, system.buffer, seconds, memory)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=None,
                        help="default 200 (--slack-burst: 30)")
    parser.add_argument("--ramp", type=float, default=None,
                        help="seconds over which the messages are spread (0, the default: all "
                             "at once; --slack-burst: 5)")
    parser.add_argument("--slack-burst", action="store_true",
                        help="the one-workspace burst: every conversation on Slack, the model "
                             f"thinking {THINK:g} s before each answer")
    parser.add_argument("--deadline", type=float, default=600.0,
                        help="seconds the answers may take before the run counts as failed")
    parser.add_argument("--max-active-runs", type=int, default=Settings().max_active_runs,
                        help="MAX_ACTIVE_RUNS of the run pool (default: the setting's default)")
    parser.add_argument("--database", default=None)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON instead")
    args = parser.parse_args()
    conversations, ramp = BURST if args.slack_burst else (200, 0.0)
    conversations = conversations if args.conversations is None else args.conversations
    ramp = ramp if args.ramp is None else args.ramp
    figures = asyncio.run(run(conversations, ramp, args.deadline, args.max_active_runs,
                              args.database, args.slack_burst))
    print(json.dumps(figures.as_dict()) if args.json else table(figures, ramp, args.slack_burst),
          flush=True)
    return 1 if figures.problems else 0


if __name__ == "__main__":
    sys.exit(main())
