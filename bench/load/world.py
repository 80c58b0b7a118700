"""The network edge of the load run: the scripted model, the fake Slack and the fake Discord,
both enforcing their platform's rate limits on real time. Every conversation has a channel of
its own, so each platform call belongs to exactly one conversation; every Slack channel is in
the one workspace (team), whose per-method budgets they all spend."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
import functools
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.discordfake import FakeDiscord
from tests.fakes.llm_server import ScriptedLLM
from tests.fakes.slack import FakeSlack

from .script import respond

SLACK_TOKEN = "xoxb-load"
SIGNING_SECRET = "load-signing-secret"


@dataclass
class World:
    llm: ScriptedLLM
    slack: FakeSlack
    discord: FakeDiscord
    slack_channels: dict[int, str] = field(default_factory=dict)  # conversation -> channel id
    discord_channels: dict[int, int] = field(default_factory=dict)
    discord_users: dict[int, dict[str, Any]] = field(default_factory=dict)  # who asks there
    slack_only: bool = False  # every conversation on Slack (the one-workspace burst)

    def on_slack(self, number: int) -> bool:
        return self.slack_only or on_slack(number)


def on_slack(number: int) -> bool:
    """Odd conversations talk through Slack, even ones through Discord."""
    return number % 2 == 1


@asynccontextmanager
async def running_world(conversations: int, slack_only: bool = False,
                        think: float = 0.0) -> AsyncIterator[World]:
    """The fakes, with a channel and a user per conversation (on Discord they must exist
    before the bot connects); `slack_only`: every conversation on Slack; `think`: seconds the
    model thinks before each final answer."""
    responder = functools.partial(respond, think=think)
    async with ScriptedLLM(responder=responder, keep_requests=False) as llm, \
            FakeSlack(bot_token=SLACK_TOKEN) as slack, FakeDiscord() as discord:
        world = World(llm, slack, discord, slack_only=slack_only)
        for number in range(1, conversations + 1):
            if world.on_slack(number):
                add_slack_conversation(world, number)
            else:
                world.discord_channels[number] = discord.add_text_channel(f"load-{number}")
                world.discord_users[number] = discord.add_user(f"user{number}")
        yield world


def add_slack_conversation(world: World, number: int) -> None:
    """A Slack channel of its own for conversation `number` (any time, even under load)."""
    channel = f"CLOAD{number:05d}"
    world.slack.workspace.add_channel(channel, f"load-{number}")
    world.slack_channels[number] = channel
