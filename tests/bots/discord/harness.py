"""Running the real DiscordBot against FakeDiscord, and reading what it shows there."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

from bots.discord import DiscordBot
from bots.discord.delivery.writer import WRITE_TIMEOUT
from bots.discord.supervisor import RECONNECT_BACKOFF
from core.config import Settings
from core.edge.backoff import Backoff
from core.edge.platform_links import PlatformLink
from core.edge.ratelimit import RateLimiter
from core.runtime.pool import RunPool
from tests.fakes.changes import WAIT
from tests.fakes.discordfake import Call, FakeDiscord, InteractionRecord

Payload = dict[str, Any]
SPEED = 10.0  # the `fake` fixture's rate-limit windows pass this much faster than real time
POST = "POST /channels/{channel_id}/messages"
EDIT = "PATCH /channels/{channel_id}/messages/{message_id}"
CALLBACK = "POST /interactions/{webhook_id}/{webhook_token}/callback"


def settings_for(fake: FakeDiscord, channels: tuple[str, ...] = (), **extra: Any) -> Settings:
    """Settings pointing at the fake, whose CDN (DISCORD_CDN_HOSTS) is its own origin."""
    extra.setdefault("discord_cdn_hosts", (fake.base_url,))
    return Settings(discord_token=fake.token, discord_api_url=fake.api_base,
                    discord_gateway_url=fake.gateway_url, discord_channels=channels, **extra)


def fast_limiter(speed: float = SPEED) -> RateLimiter:
    """The bot's budget in a world `speed` times faster (matching the `fake` fixture)."""
    return RateLimiter(lambda: time.monotonic() * speed, lambda seconds: asyncio.sleep(seconds / speed))


@contextlib.asynccontextmanager
async def running_bot(fake: FakeDiscord, pool: RunPool, *, limiter: RateLimiter | None = None,
                      channels: tuple[str, ...] = (), write_timeout: float = WRITE_TIMEOUT,
                      link: PlatformLink | None = None, reconnect: Backoff = RECONNECT_BACKOFF,
                      **settings: Any) -> AsyncIterator[DiscordBot]:
    """A started bot, ready on the fake's gateway; stopped on exit (`settings`: more of them)."""
    bot = DiscordBot(settings_for(fake, channels, **settings), pool, pool.catalogue, pool.bridge,
                     limiter or fast_limiter(),
                     client_options={"guild_ready_timeout": 0.05}, write_timeout=write_timeout,
                     link=link, reconnect=reconnect)
    await bot.start()
    try:
        await bot.wait_until_ready(WAIT)
        yield bot
    finally:
        await bot.stop()


def refused_acknowledgements(fake: FakeDiscord) -> list[Call]:
    """Interaction callbacks Discord refused: later than its 3 seconds, or a second one."""
    return [c for c in fake.calls_to(CALLBACK) if c.status != 200]


def mention(fake: FakeDiscord, text: str) -> str:
    return f"<@{fake.bot_id}> {text}"


def bot_messages(fake: FakeDiscord, channel_id: int | str) -> list[Payload]:
    return [m for m in fake.messages_in(channel_id) if m["author"]["id"] == str(fake.bot_id)]


def text_of(message: Payload) -> str:
    """Everything readable in a message: content, embed titles, descriptions, fields, footers."""
    parts = [message.get("content") or ""]
    for embed in message.get("embeds", []):
        parts += [embed.get("author", {}).get("name", ""), embed.get("title", ""),
                  embed.get("description", "")]
        parts += [f"{f['name']}\n{f['value']}" for f in embed.get("fields", [])]
        parts.append(embed.get("footer", {}).get("text", ""))
    return "\n".join(p for p in parts if p)


def buttons(message: Payload) -> list[Payload]:
    return [c for row in message.get("components", []) for c in row.get("components", [])]


def button(message: Payload, label: str) -> Payload:
    found = [b for b in buttons(message) if b.get("label") == label]
    assert found, f"no button {label!r} in {[b.get('label') for b in buttons(message)]}"
    return found[0]


def showing(fake: FakeDiscord, channel_id: int | str, text: str) -> Payload | None:
    """The bot's message in the channel that shows `text`, if any."""
    return next((m for m in bot_messages(fake, channel_id) if text in text_of(m)), None)


def answered(fake: FakeDiscord, channel_id: int | str, text: str) -> Payload | None:
    """The bot's finished answer showing `text` (it has the Regenerate button)."""
    message = showing(fake, channel_id, text)
    if message and any(b.get("label") == "Regenerate" for b in buttons(message)):
        return message
    return None


def ephemeral_replies(fake: FakeDiscord, interaction_id: str) -> list[str]:
    record = fake.interaction(interaction_id)
    return [text_of(fake.message(m)) for m in record.followup_ids]


def reply_to(fake: FakeDiscord, interaction: InteractionRecord) -> str:
    """What the bot's response to an interaction says now ("" before it responded)."""
    original = fake.interaction(interaction.id).original_message_id
    return text_of(fake.message(original)) if original else ""


async def reply_of(fake: FakeDiscord, interaction: InteractionRecord, timeout: float = WAIT) -> Payload:
    """The bot's response message to an interaction, once it says something."""
    def said() -> bool:
        original = fake.interaction(interaction.id).original_message_id
        loading = bool(original) and fake.message(original)["flags"] & 128
        return bool(original) and not loading and bool(reply_to(fake, interaction))

    await fake.wait_until(said, timeout, f"a reply to interaction {interaction.id}")
    return fake.message(fake.interaction(interaction.id).original_message_id)
