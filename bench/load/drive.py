"""The users: each conversation's message sent as its platform delivers it (Slack: a signed
Events API request to the bot's route over HTTP; Discord: MESSAGE_CREATE on the gateway),
all at once or spread over `ramp` seconds, then watched until every answer is shown."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx

from tests.fakes.slack_payloads import event_request, make_slack_event, new_ts

from .observer import Observer, Seen
from .script import question
from .world import SIGNING_SECRET, World

POLL_SECONDS = 0.05  # how often the fakes' call logs are read while waiting
SETTLE_SECONDS = 120.0  # live messages must reach their final state this soon after the last answer


async def converse(world: World, events_url: str, conversations: int, ramp: float,
                   deadline: float) -> tuple[Observer, float]:
    """Send every conversation's message; wait until each shows its answer or `deadline`
    seconds pass. Returns what was seen and the seconds from the first message on."""
    async with httpx.AsyncClient(timeout=60) as http:
        await warm_up_slack(world, http, events_url)
        observer = Observer(world)
        started = time.monotonic()
        sends = [_send_later(world, observer, http, events_url, number,
                             started + ramp * (number - 1) / conversations)
                 for number in range(1, conversations + 1)]
        await asyncio.gather(*sends)
    give_up = time.monotonic() + deadline
    while observer.finished() < conversations and time.monotonic() < give_up:
        await asyncio.sleep(POLL_SECONDS)
        observer.read()
    seconds = time.monotonic() - started
    await _settle(observer)
    return observer, seconds


async def _settle(observer: Observer) -> None:
    """Until every Slack live message is final (tidied after answers posted beside them)."""
    answered = time.monotonic()
    while observer.unsettled_slack() and time.monotonic() - answered < SETTLE_SECONDS:
        await asyncio.sleep(POLL_SECONDS)
    if not observer.unsettled_slack():
        observer.slack_settled_s = time.monotonic() - answered


async def warm_up_slack(world: World, http: httpx.AsyncClient, url: str, answered: int = 1) -> None:
    """`@hermes help` once, unrecorded: bolt checks the bot token (auth.test) on the first
    events after a start and caches the answer, which a serving process did long ago.
    `answered`: the bot's posts to wait for, this one included (one per process warmed)."""
    channel = "CWARMUP"
    payload = make_slack_event("app_mention", channel=channel, text="help")
    request = event_request(payload, SIGNING_SECRET)
    (await http.post(url, content=request.body, headers=request.headers)).raise_for_status()
    await world.slack.wait_for_calls("chat.postMessage", count=answered, timeout=30)


async def _send_later(world: World, observer: Observer, http: httpx.AsyncClient,
                      events_url: str, number: int, at: float) -> None:
    await asyncio.sleep(max(0.0, at - time.monotonic()))  # the load's arrival pattern
    if world.on_slack(number):
        await ask_on_slack(world, observer, http, events_url, number)
    else:
        await ask_on_discord(world, observer, number)


async def ask_on_slack(world: World, observer: Observer, http: httpx.AsyncClient, url: str,
                       number: int, files: list[dict[str, Any]] | None = None) -> None:
    """Conversation `number`'s message as a signed event; `files`: Slack file objects it
    shares (the fake's `share_file`)."""
    channel, ts, user = world.slack_channels[number], new_ts(), f"ULOAD{number:05d}"
    payload = make_slack_event("app_mention", channel=channel, ts=ts, user=user,
                               text=question(number))
    if files:
        payload["event"]["files"] = files
    world.slack.add_message(channel, payload["event"]["text"], user=user, ts=ts)
    request = event_request(payload, SIGNING_SECRET)
    observer.expect(Seen(number, "slack", asked_at=time.monotonic()))
    response = await http.post(url, content=request.body, headers=request.headers)
    response.raise_for_status()


async def ask_on_discord(world: World, observer: Observer, number: int) -> None:
    fake = world.discord
    seen = Seen(number, "discord", asked_at=time.monotonic())
    observer.expect(seen)
    sent = await fake.send_user_message(f"<@{fake.bot_id}> {question(number)}",
                                        channel_id=world.discord_channels[number],
                                        author=world.discord_users[number])
    observer.thread_opened(number, str(sent["id"]))
