"""The product under load, composed as `hermes-chat serve` composes it: the Bridge as a child
process (the agent on its worker threads, in its own process), the run pool on the database,
the admin app serving Slack's events route over HTTP, and both platform adapters.

Differences from `serve`: the pool's log buffer is a `TimedLogBuffer`, which notes when each
row arrived and when its batch was committed; the upkeep jobs and start-up recovery are left
out (a fresh database has nothing for them); one unrecorded warm-up run goes straight to the
Bridge before the load.
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from admin.app import create_app
from admin.services import AdminServices
from bots.discord import DiscordBot
from core.agent.bridge.fleet import BridgeFleet
from core.agent.bridge.types import RunRequest
from core.agent.catalogue import load_catalogue
from core.agent.events import Done, Event
from core.config import Settings
from core.runtime.log_buffer import LogBuffer
from core.runtime.metrics import RunMetrics
from core.runtime.pool import RunPool
from core.store import db
from hermes_chat.bridge_process import bridge_child
from hermes_chat.compose import Parts
from hermes_chat.platforms import start_platforms, stop_platforms
from tests.bots.slack.harness import serving

from .script import question
from .world import SIGNING_SECRET, SLACK_TOKEN, World


class TimedLogBuffer(LogBuffer):
    """A LogBuffer that records, per row, seconds from its event's arrival (`created_at`,
    stamped by the Bridge client) to the commit of the batch holding it."""

    def __init__(self, metrics: RunMetrics) -> None:
        super().__init__(on_flush=self._committed)
        self._metrics = metrics
        self._waiting: dict[int, list[tuple[int, float]]] = {}
        self.persist_seconds: list[float] = []
        self.added: dict[int, set[int]] = {}  # message id -> seqs handed to the buffer
        self.done_at: dict[int, float] = {}  # message id -> arrival of its `done` event

    def add(self, message_id: int, event: Event) -> None:
        super().add(message_id, event)
        arrived = event.at.timestamp()
        self._waiting.setdefault(message_id, []).append((event.seq, arrived))
        self.added.setdefault(message_id, set()).add(event.seq)
        if isinstance(event, Done):
            self.done_at[message_id] = arrived

    def _committed(self, seconds: float, rows: int) -> None:
        self._metrics.flushed(seconds, rows)
        now = time.time()
        for message_id, waiting in self._waiting.items():
            stored = self.persisted_seq(message_id)
            self.persist_seconds += [now - at for seq, at in waiting if seq <= stored]
            waiting[:] = [(seq, at) for seq, at in waiting if seq > stored]


@dataclass
class System:
    settings: Settings
    pool: RunPool
    buffer: TimedLogBuffer
    events_url: str  # Slack's request URL
    bridge_pids: list[int] = field(default_factory=list)


def load_settings(world: World, database_url: str, home: Path, max_active_runs: int) -> Settings:
    """The settings an operator would set for this world (nothing else differs from serve)."""
    return Settings(
        database_url=database_url, hermes_home=str(home), bridge_port=_free_port(),
        openai_base_url=world.llm.base_url, openai_api_key="sk-load", hermes_model=world.llm.model,
        slack_bot_token=SLACK_TOKEN, slack_signing_secret=SIGNING_SECRET,
        slack_api_url=world.slack.api_url, discord_token=world.discord.token,
        discord_api_url=world.discord.api_base, discord_gateway_url=world.discord.gateway_url,
        max_active_runs=max_active_runs, models_file=str(home / "models.toml"),
        skills_dir=str(home / "skills"), log_level="WARNING",
    )


@asynccontextmanager
async def running_system(settings: Settings) -> AsyncIterator[System]:
    """Everything started and ready (Discord's gateway too); stopped on exit."""
    await db.migrate(settings.database_url)
    await db.open_database(settings.database_url)
    catalogue = load_catalogue(settings.models_file, settings.skills_dir)
    metrics = RunMetrics()
    try:
        async with bridge_child(settings, catalogue) as endpoint, \
                BridgeFleet.over_http([endpoint.url], token=endpoint.token,
                                      sleep=metrics.reconnect_pause) as bridge:
            await _warm_up(bridge)
            buffer = TimedLogBuffer(metrics)
            pool = RunPool(bridge, catalogue, max_active_runs=settings.max_active_runs,
                           metrics=metrics, buffer=buffer)
            await pool.open()
            app = create_app(settings, AdminServices(bridge, catalogue, pool))
            platforms = await start_platforms(settings, Parts(settings, catalogue, bridge, pool), app)
            try:
                for platform in platforms:
                    if isinstance(platform, DiscordBot):
                        await platform.wait_until_ready()
                async with serving(app) as base:
                    yield System(settings, pool, buffer, f"{base}/slack/events", _children())
            finally:
                await stop_platforms(platforms)
                await pool.close()
    finally:
        await db.close_database()


async def _warm_up(bridge: BridgeFleet) -> None:
    """One run straight to the Bridge, unrecorded: a Bridge's first run imports the agent
    (seconds), which one that has been serving did long ago."""
    request = RunRequest(run_id=uuid.uuid4().hex, session_id="chat-load-warm-up",
                         user_message=question(0))
    async for _ in bridge.stream(request):
        pass


def _children() -> list[int]:
    """Our child processes (the Bridge), read from /proc."""
    me = str(os.getpid())
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[1] == me:
                found.append(int(entry.name))
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
