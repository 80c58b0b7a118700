"""A SlackBot against the fake Slack, its route in a Litestar app, and the helpers tests use to
talk to it as Slack does and read what it posted.

Slack's requests (signed as Slack signs them) reach the app in this process by default: httpx
hands each to the Litestar app as ASGI, through the bot's own route (signature check, intake,
bolt). The tests of the HTTP path itself (a signature refused, retry headers, payload fuzz)
serve it over real HTTP instead (`running(..., over_http=True)`, or the `slack_http` marker on
a test using the `h` / `fh` fixtures): uvicorn on a random 127.0.0.1 port. Either way the bot's
own calls to the fake Slack are real HTTP."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import uvicorn
from litestar import Litestar

from bots.slack import SlackBot
from bots.slack.bot import API_TIMEOUT
from bots.slack.supervisor import PING_INTERVAL
from core.agent.bridge.client import BridgeClient
from core.agent.catalogue import Catalogue
from core.config import Settings
from core.edge.platform_links import PlatformLink
from core.edge.ratelimit import RateLimiter
from core.runtime.pool import RunPool
from tests.fakes.changes import CHANGES, FALLBACK, WAIT
from tests.fakes.slack import FakeSlack, Message
from tests.fakes.slack_payloads import (
    CHANNEL_ID,
    command_request,
    event_request,
    interaction_request,
    make_block_action,
    make_slack_event,
    make_slash_command,
    make_view_submission,
)
from tests.serving import KEEP_ALIVE
from tests.support.runtime import FAST

SECRET = "test-signing-secret"
Clock = Any  # SteppedClock or FastClock


def bot_settings(slack: FakeSlack, **extra: Any) -> Settings:
    return Settings(slack_bot_token="xoxb-test", slack_signing_secret=SECRET,
                    slack_api_url=slack.api_url, **extra)


def new_bot(slack: FakeSlack, pool: RunPool, clock: Clock, api_timeout: float = API_TIMEOUT,
            link: PlatformLink | None = None, socket_ping_interval: float = PING_INTERVAL,
            limiter: RateLimiter | None = None, **settings: Any) -> SlackBot:
    """`limiter`: the bot's budgets (default: its own, on `clock`)."""
    limiter = limiter or RateLimiter(clock, clock.sleep)
    return SlackBot(bot_settings(slack, **settings), pool, pool.catalogue, pool.bridge,
                    limiter=limiter, clock=clock, api_timeout=api_timeout, link=link,
                    socket_ping_interval=socket_ping_interval)


@asynccontextmanager
async def serving(app: Litestar) -> AsyncIterator[str]:
    """Serve `app` until the block exits; yields its base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(app, lifespan="on", log_level="warning", timeout_graceful_shutdown=1,
                            timeout_keep_alive=KEEP_ALIVE)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    await until(lambda: server.started or task.done(), fallback=0.005)  # no fake sees it start
    if task.done():
        task.result()  # it could not start: say why
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, WAIT)
        sock.close()


class InProcess(httpx.AsyncBaseTransport):
    """Each request handed to the ASGI app in this process, in a task of its own as a server
    runs it (its context is not the test's); an exception that escapes the app is a 500 as a
    server answers it, and a request unanswered after WAIT seconds a ReadTimeout."""

    def __init__(self, app: Litestar) -> None:
        self._asgi = httpx.ASGITransport(app=app, raise_app_exceptions=False)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        task = asyncio.create_task(self._asgi.handle_async_request(request))
        done, _ = await asyncio.wait({task}, timeout=WAIT)
        if not done:
            raise httpx.ReadTimeout(f"no answer within {WAIT} s", request=request)
        return task.result()


@asynccontextmanager
async def client_of(app: Litestar, over_http: bool) -> AsyncIterator[httpx.AsyncClient]:
    """A client of `app`, in this process or (`over_http`) served by uvicorn."""
    if not over_http:
        async with httpx.AsyncClient(transport=InProcess(app), base_url="http://slack-bot.test") as http:
            yield http
        return
    async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=WAIT) as http:
        yield http


async def until(predicate: Callable[[], Any], deadline: float = WAIT, fallback: float = FALLBACK) -> Any:
    """`predicate()`'s first truthy value (awaited when it returns an awaitable, such as a
    database query), checked again whenever a fake records something, and every `fallback`
    seconds for what no fake sees (tests/fakes/changes.py)."""
    return await CHANGES.until(predicate, deadline, fallback)


@dataclass
class Harness:
    slack: FakeSlack
    bot: SlackBot
    pool: RunPool
    http: httpx.AsyncClient

    # --- as Slack: events, clicks, modals, commands ---------------------------------------

    async def event(self, kind: str = "app_mention", retry_num: int | None = None,
                    event_id: str | None = None, **fields: Any) -> dict[str, Any]:
        payload = make_slack_event(kind, event_id=event_id, **fields)
        response = await self.post_event(payload, retry_num)
        assert response.status_code == 200, response.text
        return payload["event"]

    async def post_event(self, payload: dict[str, Any], retry_num: int | None = None) -> httpx.Response:
        request = event_request(payload, SECRET, retry_num=retry_num)
        return await self.http.post("/slack/events", content=request.body, headers=request.headers)

    async def click(self, message: Message, action_id: str, user: str = "U0USER",
                    trigger: bool = False, **fields: Any) -> httpx.Response:
        """Click the button `action_id` of a bot message (its value as rendered)."""
        element = button(message, action_id)
        payload = make_block_action(
            action_id, element.get("value"), user=user, channel=message.channel,
            message_ts=message.ts, thread_ts=message.thread_ts,
            trigger_id=self.slack.new_trigger_id() if trigger else "0.0.unknown", **fields)
        return await self.interact(payload)

    async def interact(self, payload: dict[str, Any]) -> httpx.Response:
        request = interaction_request(payload, SECRET)
        response = await self.http.post("/slack/events", content=request.body, headers=request.headers)
        assert response.status_code == 200, response.text
        return response

    async def submit(self, callback_id: str, values: dict[str, dict[str, Any]],
                     private_metadata: str, user: str = "U0USER") -> httpx.Response:
        payload = make_view_submission(callback_id, values, private_metadata=private_metadata, user=user)
        return await self.interact(payload)

    async def command(self, text: str, channel: str = CHANNEL_ID, user: str = "U0USER") -> dict[str, Any]:
        """`/hermes <text>`; the acknowledgement's message (Slack takes JSON or plain text)."""
        fields = make_slash_command("/hermes", text, channel=channel, user=user,
                                    trigger_id=self.slack.new_trigger_id())
        request = command_request(fields, SECRET)
        response = await self.http.post("/slack/events", content=request.body, headers=request.headers)
        assert response.status_code == 200, response.text
        if response.headers["content-type"].startswith("application/json"):
            return response.json()
        return {"text": response.text}

    # --- reading what the bot did ---------------------------------------------------------

    def bot_messages(self, channel: str, thread_ts: str) -> list[Message]:
        return [m for m in self.slack.thread(channel, thread_ts) if m.bot_id]

    async def answered(self, channel: str, thread_ts: str, count: int = 1) -> list[Message]:
        """Until `count` bot messages of the thread show a finished turn (a Regenerate button)."""
        return await until(lambda: _if(
            [m for m in self.bot_messages(channel, thread_ts) if has_button(m, "hermes.answer.regenerate")],
            count))

    def ephemerals(self, user: str = "U0USER") -> list[str]:
        return [e.get("text", "") for e in self.slack.workspace.ephemerals if e.get("user") == user]


def _if(items: list[Message], count: int) -> list[Message] | None:
    return items if len(items) >= count else None


def texts(message: Message) -> str:
    """Every text a message shows (what it streamed, its tasks, its blocks' sections,
    markdown and contexts), one per line."""
    lines: list[str] = [message.text] if message.chunks and message.text else []
    lines += [f"{task['title']}\n{task.get('details', '')}" for task in message.tasks.values()]
    for block in message.blocks or []:
        if "text" in block and isinstance(block["text"], dict):
            lines.append(block["text"].get("text", ""))
        if block.get("type") == "markdown":
            lines.append(block["text"])
        for element in block.get("elements", []):
            if element.get("type") == "mrkdwn":
                lines.append(element.get("text", ""))
    return "\n".join(lines)


def buttons(message: Message) -> list[dict[str, Any]]:
    return [e for b in message.blocks or [] if b.get("type") == "actions" for e in b["elements"]]


def button(message: Message, action_id: str) -> dict[str, Any]:
    found = [e for e in buttons(message) if e.get("action_id") == action_id]
    assert found, f"no {action_id} in {[e.get('action_id') for e in buttons(message)]}"
    return found[0]


def has_button(message: Message, action_id: str) -> bool:
    return any(e.get("action_id") == action_id for e in buttons(message))


@asynccontextmanager
async def running(slack: FakeSlack, pool: RunPool, clock: Clock, api_timeout: float = API_TIMEOUT,
                  link: PlatformLink | None = None, socket_ping_interval: float = PING_INTERVAL,
                  limiter: RateLimiter | None = None, over_http: bool = False,
                  **settings: Any) -> AsyncIterator[Harness]:
    """A started SlackBot for `pool`, its route in a Litestar app that Slack's requests reach
    in this process (or `over_http`, served by uvicorn); stopped on exit."""
    bot = new_bot(slack, pool, clock, api_timeout, link, socket_ping_interval, limiter, **settings)
    app = Litestar(route_handlers=bot.route_handlers(), logging_config=None)
    async with client_of(app, over_http) as http:
        await bot.start()
        try:
            yield Harness(slack, bot, pool, http)
        finally:
            await bot.stop()


@asynccontextmanager
async def restartable(bridge_url: str, catalogue: Catalogue, slack: FakeSlack,
                      clock: Clock) -> AsyncIterator[Callable[[], AbstractAsyncContextManager[Harness]]]:
    """`serve()`: a process of `serve` (its pool and bot) on one Bridge, started afresh each
    time; leaving it is the process going away while its runs wait on the Bridge."""
    async with BridgeClient(bridge_url, policy=FAST) as client:
        @asynccontextmanager
        async def serve() -> AsyncIterator[Harness]:
            pool = RunPool(client, catalogue)
            await pool.open()
            try:
                async with running(slack, pool, clock) as harness:
                    yield harness
            finally:
                await pool.close()
        yield serve
