"""Gateway payloads of every shape, through the fake gateway into the running bot (real
discord.py): partial MESSAGE_UPDATEs, messages of only stickers, embeds or a poll,
interactions from channels the bot cannot see, and a hypothesis test that mutates real-shaped
dispatches. None may end in an error logged with a traceback; discord.py's own parsers are
guarded by the supervisor (a dispatch it cannot parse is dropped, said at debug)."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bots.discord import DiscordBot
from bots.discord.intake import STALE
from core.conversation.refusals import NO_WORDS
from core.runtime.pool import RunPool
from core.store.models import ChatMessage
from tests.bots.discord.harness import bot_messages, mention, reply_of, running_bot, text_of
from tests.fakes import discord_payloads as dp
from tests.fakes.discordfake import FakeDiscord
from tests.payload_mutations import ANY_VALUE, mutate
from tests.fakes.changes import WAIT

Payload = dict[str, Any]
STICKER = {"id": "1", "name": "wave", "format_type": 1}


def errors(caplog: pytest.LogCaptureFixture, since: int = 0) -> list[str]:
    """Records of something that broke: ERROR or worse, or any line with a traceback (the
    supervisor's drops are said at debug, without one)."""
    return [f"{r.name}: {r.getMessage()}" for r in caplog.records[since:]
            if r.levelno >= logging.ERROR or r.exc_info]


async def settled(fake: FakeDiscord, bot: DiscordBot, seq: int | None) -> None:
    """Until the client has read dispatch `seq` and every handler it started has ended."""
    def done() -> bool:
        ws = bot.client.ws
        busy = [t for t in asyncio.all_tasks() if t.get_name().startswith("discord.py: on_") and not t.done()]
        return ws is not None and (seq is None or (ws.sequence or 0) >= seq) and not busy
    await fake.wait_until(done, WAIT, f"dispatch {seq} handled")


def stored(fake: FakeDiscord, channel_id: int, content: str, **fields: Any) -> Payload:
    """A message of alice kept in the fake's world (so replies and threads on it work)."""
    message = dp.make_message(id=fake.world.ids.next(), channel_id=channel_id, author=fake.user,
                              content=content, mentions=fake.world.mentions_in(content), **fields)
    fake.world.store_message(message)
    return fake.world.for_gateway(message)


async def test_an_update_without_its_author_or_content_starts_nothing(
    fake: FakeDiscord, fake_runs: RunPool, caplog: pytest.LogCaptureFixture
) -> None:
    """A MESSAGE_UPDATE of a message discord.py has not cached (sent before a restart) that
    carries content but no author: discord.py builds a Message without `author`, which the
    edit handler read (AttributeError, logged as an error by discord.py)."""
    async with running_bot(fake, fake_runs) as bot:
        update = dp.without(stored(fake, fake.dm_channel_id(), "edited words"), "author")
        await settled(fake, bot, await fake.dispatch("MESSAGE_UPDATE", update))
        embeds_only = dp.make_partial_message_update(
            id=update["id"], channel_id=fake.channel_id, guild_id=fake.guild_id,
            embeds=[dp.make_embed(title="A link preview")])
        await settled(fake, bot, await fake.dispatch("MESSAGE_UPDATE", embeds_only))
    assert not errors(caplog) and await ChatMessage.all().count() == 0


@pytest.mark.parametrize("fields", [
    {"sticker_items": [STICKER]}, {"embeds": [dp.make_embed(title="a card")]},
    {"poll": {"question": {"text": "lunch?"}, "answers": [{"answer_id": 1, "poll_media": {"text": "yes"}}],
              "expiry": dp.iso_time(2_000_000_000), "allow_multiselect": False, "layout_type": 1}},
], ids=["stickers", "embeds", "poll"])
async def test_a_message_without_words_is_told_the_bot_reads_text(
    fake: FakeDiscord, fake_runs: RunPool, caplog: pytest.LogCaptureFixture, fields: Payload
) -> None:
    dm = fake.dm_channel_id()
    async with running_bot(fake, fake_runs) as bot:
        message = stored(fake, dm, "", **fields)
        await settled(fake, bot, await fake.dispatch("MESSAGE_CREATE", message))
        await fake.wait_until(lambda: bot_messages(fake, dm), WAIT, "the notice")
    assert NO_WORDS in text_of(bot_messages(fake, dm)[0])
    assert not errors(caplog) and await ChatMessage.all().count() == 0


def uncached_thread(fake: FakeDiscord, *, hidden: bool = False) -> int:
    """A thread of #general that exists but the client never heard of (no THREAD_CREATE
    reached it: opened while it was away); `hidden`: the bot may not view it (403)."""
    thread = dp.make_thread(fake.world.ids.next(), fake.guild_id, fake.channel_id, fake.user["id"], "t")
    fake.world.add_channel(thread)
    if hidden:
        fake.world.hidden.add(thread["id"])
    return int(thread["id"])


async def test_a_message_in_a_thread_the_bot_cannot_view_is_ignored(
    fake: FakeDiscord, fake_runs: RunPool, caplog: pytest.LogCaptureFixture
) -> None:
    """discord.py hands an uncached channel as a PartialMessageable; fetching it fails with
    403 where the bot lost access, which ended the handler in a traceback."""
    async with running_bot(fake, fake_runs) as bot:
        thread = uncached_thread(fake, hidden=True)
        message = {**stored(fake, thread, mention(fake, "hi")), "guild_id": str(fake.guild_id)}
        await settled(fake, bot, await fake.dispatch("MESSAGE_CREATE", message))
    assert not errors(caplog) and bot_messages(fake, thread) == []
    assert await ChatMessage.all().count() == 0


async def test_a_command_from_a_thread_the_bot_has_not_cached_is_answered(
    fake: FakeDiscord, fake_runs: RunPool, caplog: pytest.LogCaptureFixture
) -> None:
    async with running_bot(fake, fake_runs) as bot:
        thread = uncached_thread(fake)
        record = await fake.run_command("hermes", "status", channel_id=thread)
        reply = await reply_of(fake, record)
        await settled(fake, bot, None)
    assert "conversation" in text_of(reply).lower()
    assert not errors(caplog)


async def test_a_mention_on_a_message_deleted_before_its_thread_opened_is_dropped_quietly(
    fake: FakeDiscord, fake_runs: RunPool, caplog: pytest.LogCaptureFixture
) -> None:
    async with running_bot(fake, fake_runs) as bot:
        gone = dp.make_message(id=fake.world.ids.next(), channel_id=fake.channel_id, author=fake.user,
                               content=mention(fake, "hi"), mentions=[fake.bot], guild_id=fake.guild_id)
        await settled(fake, bot, await fake.dispatch("MESSAGE_CREATE", gone))  # never in the world
    assert not errors(caplog) and fake.threads_of(fake.channel_id) == []


async def test_a_command_this_version_does_not_have_is_answered_in_words(
    fake: FakeDiscord, fake_runs: RunPool, caplog: pytest.LogCaptureFixture
) -> None:
    """Discord can still show a command an older version synced (or send an option of
    another type): discord.py logged that as an error with its traceback."""
    async with running_bot(fake, fake_runs) as bot:
        record = await fake.dispatch_interaction(dp.make_command_interaction(
            name="retired", command_id=dp.snowflake(), id=fake.world.ids.next(),
            application_id=fake.application_id, channel=fake.channel(fake.dm_channel_id()),
            user=fake.user))
        reply = await reply_of(fake, record)
        await settled(fake, bot, None)
    assert STALE in text_of(reply)
    assert not errors(caplog)


# --- hypothesis: real shapes, mutated ------------------------------------------------


def real_shapes(fake: FakeDiscord) -> list[tuple[str, Payload]]:
    """One of each dispatch the bot reads, as the gateway sends it (the messages are kept in
    the fake's world, as Discord keeps what it dispatches)."""
    dm, channel = fake.dm_channel_id(), fake.channel_id
    asked = stored(fake, channel, mention(fake, "what is 2+2?"))
    in_dm = stored(fake, dm, "hello")
    before_restart = stored(fake, dm, "sent before a restart")  # never in discord.py's cache
    (command,) = [c for c in fake.commands() if c["name"] == "hermes"]
    common = {"application_id": fake.application_id, "user": fake.user}
    guild = {**common, "channel": fake.channel(channel), "guild_id": fake.guild_id,
             "member": dp.make_member(fake.user)}
    private = {**common, "channel": fake.channel(dm)}
    return [
        ("MESSAGE_CREATE", asked), ("MESSAGE_CREATE", in_dm),
        ("MESSAGE_CREATE", stored(fake, dm, "", sticker_items=[STICKER])),
        ("MESSAGE_UPDATE", {**in_dm, "content": "hello again", "edited_timestamp": dp.iso_time()}),
        ("MESSAGE_UPDATE", {**before_restart, "content": "new words", "edited_timestamp": dp.iso_time()}),
        ("MESSAGE_UPDATE", dp.make_partial_message_update(id=asked["id"], channel_id=channel,
                                                          guild_id=fake.guild_id, embeds=[dp.make_embed(title="x")])),
        ("INTERACTION_CREATE", dp.make_component_interaction(custom_id="hermes:regen:1", message=in_dm, **private)),
        ("INTERACTION_CREATE", dp.make_component_interaction(custom_id="hermes:model:1", message=asked,
                                                             component_type=3, values=["fast"], **guild)),
        ("INTERACTION_CREATE", dp.make_modal_submit(custom_id="hermes:answer:1", components=[
            {"type": 18, "id": 1, "component": {"type": 4, "id": 2, "custom_id": "answer", "value": "blue"}}],
            message=in_dm, **private)),
        ("INTERACTION_CREATE", dp.make_command_interaction(name="hermes", command_id=command["id"],
                                                           path=["status"], **guild)),
    ]


VALUES = ANY_VALUE | st.sampled_from(["hermes:stop:r1", "hermes:pick:1:0"])
KEYS = {("id",), ("token",)}  # an interaction's: its callback goes there (the fake checks it)


async def test_mutated_gateway_payloads_never_end_in_a_traceback(
    fake: FakeDiscord, fake_runs: RunPool, caplog: pytest.LogCaptureFixture
) -> None:
    loop = asyncio.get_running_loop()
    async with running_bot(fake, fake_runs) as bot:
        shapes = real_shapes(fake)

        async def deliver(event: str, original: Payload, payload: Payload) -> None:
            if event == "INTERACTION_CREATE":
                fake.core.register_interaction(original)  # the fake accepts its callbacks
            await settled(fake, bot, await fake.dispatch(event, payload))

        @settings(max_examples=100, deadline=None, derandomize=True,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
        @given(shape=st.sampled_from(shapes), data=st.data())
        def dispatched(shape: tuple[str, Payload], data: st.DataObject) -> None:
            event, payload = shape
            if event == "INTERACTION_CREATE":  # each interaction is answered once: a new one
                payload = {**payload, "id": str(fake.world.ids.next()), "token": f"itoken-{dp.snowflake()}"}
            mutated = mutate(payload, data, VALUES, KEYS if event == "INTERACTION_CREATE" else ())
            seen = len(caplog.records)
            asyncio.run_coroutine_threadsafe(deliver(event, payload, mutated), loop).result(timeout=30)
            broken = errors(caplog, seen)
            assert not broken, (broken, event, json.dumps(mutated, default=str)[:2000])

        await asyncio.to_thread(dispatched)
        assert bot.link.report().state.value == "ok"
