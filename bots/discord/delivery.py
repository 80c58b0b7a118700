"""Channel delivery: every message the bot writes goes through here, top to bottom.

1. **The budget.** Discord allows about 5 message writes (POST and PATCH) per 5 s per
   channel, a thread being a channel of its own, shared by everything the bot writes there.
   `ChannelBudget` is one token bucket a channel on core's RateLimiter: 0.8 writes/s with a
   burst of 1 puts at most 4 writes in a 5-second window that opens with a write (as
   Discord's do), so a little clock skew or network jitter never costs a 429: about 25
   writes in a 30 s run.
2. **The outbox.** Pending writes per channel: one worker per busy channel, the latest job
   per key. A job is offered under a key (a turn, a question, a one-off post). Offering again
   under a pending key replaces the job in its place, so a run that changes ten times while
   its channel waits for budget costs one write, showing the newest state: coalesced, and
   the final state is always sent because nothing removes a job but running it. The worker
   takes a token of the channel's budget *before* it picks the job, so the job it picks is
   the freshest. A rate-limited job is tried MAX_ATTEMPTS times; one that met Discord down
   is tried until the budget's outage patience is spent.
3. **The writer.** The REST writes of message parts: every write spends a token of its
   channel's budget (`Permit`), and a 429 closes the channel for its Retry-After before the
   job is tried again (`RetryLater`). Discord down (a 5xx, a lost connection, a write that
   hangs past `timeout`) closes the channel for an exponentially growing pause and the job is
   tried again (the outbox re-renders the newest state), until the budget's patience is spent
   and the writer raises the error itself.
4. **The components.** `view_of` turns a part's buttons and selects into what discord.py sends.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Any

import aiohttp
import discord

from bots.discord.render.parts import Part
from core.edge.backoff import Outages
from core.edge.dedupe import Recent, Seen
from core.edge.ratelimit import Limit, RateLimiter

log = logging.getLogger(__name__)

# --- 1. the budget ---------------------------------------------------------------------

CHANNEL_LIMIT = Limit(per_second=0.8, burst=1)
DEFAULT_RETRY_AFTER = 5.0  # a whole window, when a 429 does not say how long
FORBIDDEN_PAUSE = 60.0  # a channel that refused us: do not ask again at once


class RetryLater(Exception):
    """A write was rate limited, or met Discord down (`outage`): run the job again later."""

    def __init__(self, outage: bool = False) -> None:
        super().__init__("Discord was down" if outage else "rate limited")
        self.outage = outage


class ChannelBudget:
    """Tokens per channel; a 429 closes the channel for its Retry-After, an outage (5xx,
    timeout) for a pause that doubles with each failure in a row (core.edge.backoff)."""

    def __init__(self, limiter: RateLimiter, limit: Limit = CHANNEL_LIMIT,
                 route: str = "channel") -> None:
        self._limiter = limiter
        self._limit = limit
        self._route = route  # Discord budgets message writes, reactions, renames apart
        self._outages = Outages()  # its pauses run on the limiter's (injected) clock

    def key(self, channel_id: int) -> str:
        return f"discord:{self._route}:{channel_id}"

    async def acquire(self, channel_id: int) -> None:
        await self._limiter.acquire(self.key(channel_id), self._limit)

    def penalise(self, channel_id: int, seconds: float) -> None:
        self._limiter.penalise(self.key(channel_id), seconds)

    def outage(self, channel_id: int) -> float | None:
        """A write met Discord down: close the channel for the next pause of its streak and
        return it; None once the streak's patience is spent (give the write up)."""
        pause = self._outages.failed(channel_id)
        if pause is not None:
            self.penalise(channel_id, pause)
        return pause

    def recovered(self, channel_id: int) -> None:
        """A write went through: the channel's next outage starts with a short pause."""
        self._outages.recovered(channel_id)


class Permit:
    """The writes of one outbox job: the outbox paid for the first before the job started."""

    def __init__(self, budget: ChannelBudget, channel_id: int, prepaid: bool = True) -> None:
        self.budget = budget
        self.channel_id = channel_id
        self._prepaid = prepaid

    async def take(self) -> None:
        """Before each write: the first is paid for, the next ones wait for a token."""
        if not self._prepaid:
            await self.budget.acquire(self.channel_id)
        self._prepaid = False


def retry_after(error: Exception) -> float:
    """Seconds a 429 asks us to wait: discord.py's RateLimited, the Retry-After header, or a window."""
    if isinstance(error, discord.RateLimited):
        return error.retry_after
    response = getattr(error, "response", None)
    header = response.headers.get("Retry-After") if response is not None else None
    try:
        return float(header) if header else DEFAULT_RETRY_AFTER
    except ValueError:
        return DEFAULT_RETRY_AFTER


# --- 2. the outbox ---------------------------------------------------------------------

Job = Callable[[Permit], Awaitable[None]]
MAX_ATTEMPTS = 5


@dataclass(slots=True)
class _Entry:
    job: Job
    attempts: int = 0


class Outbox:
    def __init__(self, budget: ChannelBudget) -> None:
        self._budget = budget
        self._queues: dict[int, OrderedDict[Hashable, _Entry]] = {}
        self._workers: dict[int, asyncio.Task[None]] = {}

    def offer(self, channel_id: int, key: Hashable, job: Job) -> None:
        """Queue `job` for the channel, replacing a pending job of the same key in its place."""
        queue = self._queues.setdefault(channel_id, OrderedDict())
        pending = queue.get(key)
        queue[key] = _Entry(job, pending.attempts if pending else 0)
        if channel_id not in self._workers:
            self._workers[channel_id] = asyncio.create_task(
                self._drain(channel_id, queue), name=f"discord-outbox-{channel_id}")

    def busy(self) -> int:
        """How many channels have writes waiting or going out."""
        return len(self._workers)

    async def close(self, timeout: float) -> None:
        """Let pending writes finish for up to `timeout` seconds, then cancel the rest."""
        workers = list(self._workers.values())
        if workers:
            await asyncio.wait(workers, timeout=timeout)
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)

    async def _drain(self, channel_id: int, queue: OrderedDict[Hashable, _Entry]) -> None:
        try:
            while queue:
                await self._budget.acquire(channel_id)
                key, entry = queue.popitem(last=False)
                await self._run(channel_id, key, entry)
        finally:
            del self._workers[channel_id]
            if not queue:
                self._queues.pop(channel_id, None)

    async def _run(self, channel_id: int, key: Hashable, entry: _Entry) -> None:
        try:
            await entry.job(Permit(self._budget, channel_id))
        except RetryLater as retry:
            self._again(channel_id, key, entry, counted=not retry.outage)
        except discord.HTTPException as error:  # a bad request is never repeated
            log.warning("discord write dropped (%s %s): %s", error.status, error.code, error.text,
                        extra={"channel_id": channel_id, "job": repr(key)})
        except Exception:
            log.exception("discord write failed", extra={"channel_id": channel_id, "job": repr(key)})

    def _again(self, channel_id: int, key: Hashable, entry: _Entry, counted: bool) -> None:
        if counted:
            entry.attempts += 1
        if entry.attempts >= MAX_ATTEMPTS:
            log.warning("discord write given up after %d attempts", entry.attempts,
                        extra={"channel_id": channel_id, "job": repr(key)})
            return
        queue = self._queues[channel_id]  # its worker is the caller, still draining it
        queue.setdefault(key, entry)  # a newer job for the key wins over the retry
        queue.move_to_end(key, last=False)


# --- 3. the writer ---------------------------------------------------------------------

WRITE_TIMEOUT = 30.0  # seconds; discord.py's own session waits up to 5 minutes


class Writer:
    def __init__(self, client: discord.Client, timeout: float = WRITE_TIMEOUT) -> None:
        self._client = client
        self._timeout = timeout
        self._shown: Recent[int, str] = Recent()  # message id -> signature of what it shows

    async def post(self, permit: Permit, part: Part, reply_to: int | None = None) -> int:
        channel = self._client.get_partial_messageable(permit.channel_id)
        body = _body(part)
        if reply_to is not None:
            body["reference"] = discord.MessageReference(
                message_id=reply_to, channel_id=permit.channel_id, fail_if_not_exists=False)
        async with self._writing(permit):
            message = await channel.send(**body)
        self._shown.put(message.id, part.signature())
        return message.id

    async def edit(self, permit: Permit, message_id: int, part: Part) -> int:
        """Show `part` in the message; the id of the message showing it (a new one if it was deleted)."""
        if self._shown.get(message_id) == part.signature():
            return message_id
        channel = self._client.get_partial_messageable(permit.channel_id)
        try:
            async with self._writing(permit):
                body = _body(part)
                await channel.get_partial_message(message_id).edit(
                    embeds=body["embeds"], view=body.get("view"),
                    attachments=[body["file"]] if "file" in body else [])
        except discord.NotFound:
            log.info("a message of the bot was deleted; posting it again",
                     extra={"message_id": message_id})
            return await self.post(permit, part)
        self._shown.put(message_id, part.signature())
        return message_id

    async def react(self, permit: Permit, message_id: int, emoji: str) -> None:
        """Add the bot's reaction `emoji` to a message of the permit's channel."""
        message = self._client.get_partial_messageable(permit.channel_id).get_partial_message(message_id)
        async with self._writing(permit):
            await message.add_reaction(emoji)

    async def unreact(self, permit: Permit, message_id: int, emoji: str) -> None:
        """Remove the bot's own reaction `emoji` (Discord accepts it when it is not there)."""
        me = self._client.user
        if me is None:
            return
        message = self._client.get_partial_messageable(permit.channel_id).get_partial_message(message_id)
        async with self._writing(permit):
            await message.remove_reaction(emoji, me)

    async def rename(self, permit: Permit, thread: discord.Thread, name: str) -> None:
        """Rename a thread (the permit's channel)."""
        async with self._writing(permit):
            await thread.edit(name=name)

    async def delete(self, permit: Permit, message_id: int) -> None:
        channel = self._client.get_partial_messageable(permit.channel_id)
        with contextlib.suppress(discord.NotFound):
            async with self._writing(permit):
                await channel.get_partial_message(message_id).delete()
        self._shown.pop(message_id)

    @contextlib.asynccontextmanager
    async def _writing(self, permit: Permit) -> AsyncIterator[None]:
        await permit.take()
        try:
            async with asyncio.timeout(self._timeout):
                yield
        except discord.RateLimited as error:
            permit.budget.penalise(permit.channel_id, error.retry_after)
            raise RetryLater from error
        except discord.HTTPException as error:
            if error.status == 429:
                permit.budget.penalise(permit.channel_id, retry_after(error))
                raise RetryLater from error
            if error.status >= 500:
                _down(permit, error)
                raise RetryLater(outage=True) from error
            if error.status == 403:
                permit.budget.penalise(permit.channel_id, FORBIDDEN_PAUSE)
            raise
        except (TimeoutError, aiohttp.ClientError, OSError) as error:
            _down(permit, error)
            raise RetryLater(outage=True) from error
        permit.budget.recovered(permit.channel_id)


class Refusals:
    """Cosmetic writes (a reaction, a thread's name) Discord refused: 403 (Missing
    Permissions, Missing Access) or 404 (the user deleted their message, the thread is
    gone). Each is skipped, never retried, and said once per channel and code."""

    def __init__(self) -> None:
        self._said = Seen()

    @contextlib.asynccontextmanager
    async def skipping(self, what: str, channel_id: int) -> AsyncIterator[None]:
        try:
            yield
        except (discord.Forbidden, discord.NotFound) as error:
            if self._said.first((channel_id, error.code)):
                log.info("discord: %s refused (%s %s: %s); skipped", what, error.status,
                         error.code, error.text, extra={"channel_id": channel_id})


def _down(permit: Permit, error: Exception) -> None:
    """Close the channel for its next outage pause; re-raise `error` once patience is spent."""
    pause = permit.budget.outage(permit.channel_id)
    if pause is None:
        raise error
    log.warning("discord unavailable (%s): trying again in %.0fs", _describe(error), pause,
                extra={"channel_id": permit.channel_id})


def _describe(error: Exception) -> str:
    if isinstance(error, discord.HTTPException):
        return f"HTTP {error.status}"
    return type(error).__name__


def _body(part: Part) -> dict[str, Any]:
    """The keyword arguments of discord.py's send (`embeds`, and `view` and `file` if any)."""
    body: dict[str, Any] = {"embeds": [part.embed]}
    view = view_of(part)
    if view is not None:
        body["view"] = view
    if part.file is not None:
        body["file"] = discord.File(io.BytesIO(part.file.data), filename=part.file.filename)
    return body


# --- 4. the components -----------------------------------------------------------------

STYLES = {
    "primary": discord.ButtonStyle.primary,
    "secondary": discord.ButtonStyle.secondary,
    "success": discord.ButtonStyle.success,
    "danger": discord.ButtonStyle.danger,
}


def view_of(part: Part) -> discord.ui.View | None:
    """The part's components as a view to send (None: no components).

    The view is stopped before it is sent: discord.py then keeps nothing for the message
    (an ephemeral one would otherwise hold a 15-minute timer), and clicks still reach the
    DynamicItems registered in `setup_hook` (bots/discord/actions.py) by their custom ids.
    """
    if not part.buttons and not part.selects:
        return None
    view = discord.ui.View(timeout=None)
    for select in part.selects:
        options = [discord.SelectOption(label=label[:100], value=value, default=value == select.current)
                   for label, value in select.options]
        view.add_item(discord.ui.Select(custom_id=select.custom_id, placeholder=select.placeholder,
                                        options=options))
    for spec in part.buttons:
        view.add_item(discord.ui.Button(label=spec.label, custom_id=spec.custom_id,
                                        style=STYLES[spec.style], disabled=spec.disabled,
                                        emoji=spec.emoji, row=spec.row))
    view.stop()
    return view
