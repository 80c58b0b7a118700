"""A FakeDiscord per test (fixture `fake`, a plugin of tests/conftest.py), the check that a
Discord test leaves no task running, and the clarify question as a test finds it in Discord."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from core.agent.catalogue import ModelEntry
from tests.bots.discord.harness import (
    SPEED,
    Payload,
    bot_messages,
    buttons,
    mention,
    refused_acknowledgements,
    text_of,
)
from tests.fakes.discordfake import FakeDiscord, Limits
from tests.fakes.changes import WAIT

MODELS = (ModelEntry("fast", "Fast", "small-model"), ModelEntry("smart", "Smart", "big-model"))
COLOUR = {"question": "Which colour?", "choices": ["red", "blue"]}


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    """A Discord whose rate-limit windows pass SPEED times faster (the bot's budget too, see
    `harness.running_bot`), so conversations are not paced by 5-second windows. On exit:
    no 429, and no interaction callback refused (late, or a second one)."""
    limits = Limits(message_window=5.0 / SPEED, webhook_window=2.0 / SPEED)
    async with FakeDiscord(limits=limits) as server, server.patch_discord():
        yield server
        assert server.rate_limited == [], "the bot's own budget must keep it clear of 429s"
        assert refused_acknowledgements(server) == [], "each interaction acknowledged in time, once"


@pytest.fixture
def fake_discord(fake: FakeDiscord) -> FakeDiscord:
    """`fake`, named for tests that hold the fake Slack too."""
    return fake


@pytest.fixture
async def no_leaked_tasks() -> AsyncIterator[None]:
    """No task the test started is left running after it (conftests of the Discord tests use
    it for every test)."""
    before = asyncio.all_tasks()
    yield
    leaked = {t for t in asyncio.all_tasks() - before if t is not asyncio.current_task()}
    if leaked:
        await asyncio.wait(leaked, timeout=2.0)
    names = [f"{t.get_name()} {t.get_coro()!r}" for t in leaked if not t.done()]
    assert not names, f"tasks left running: {names}"


async def ask(fake: FakeDiscord, question: str = "Which colour?") -> tuple[int, Payload]:
    """Mention the bot; the thread and the question's message once it shows with buttons."""
    asked = await fake.send_user_message(mention(fake, "paint the shed"))
    thread = int(asked["id"])

    def question_shown() -> Payload | None:
        return next((m for m in bot_messages(fake, thread)
                     if m["embeds"] and m["embeds"][0].get("title") == "❓ Hermes asks"
                     and question in text_of(m) and buttons(m)), None)

    await fake.wait_until(question_shown, WAIT, "the question")
    message = question_shown()
    assert message is not None
    return thread, message
