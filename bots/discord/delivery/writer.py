"""The writer: the REST writes of message parts, reactions, thread names and typing.

Every write spends a token of its channel's budget (`Permit`), and a 429 closes the channel
for its Retry-After before the job is tried again (`RetryLater`). Discord down (a 5xx, a lost
connection, a write that hangs past `timeout`) closes the channel for an exponentially growing
pause and the job is tried again (the outbox re-renders the newest state), until the budget's
patience is spent and the writer raises the error itself. A cosmetic write Discord refuses
is skipped (`Refusals`).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import discord

from bots.discord.delivery.budgets import Permit
from bots.discord.delivery.components import view_of
from bots.discord.delivery.outbox import RetryLater
from bots.discord.render.parts import Part
from core.edge.dedupe import Recent, Seen

log = logging.getLogger(__name__)
DEFAULT_RETRY_AFTER = 5.0  # a whole window, when a 429 does not say how long
FORBIDDEN_PAUSE = 60.0  # a channel that refused us: do not ask again at once


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


WRITE_TIMEOUT = 30.0  # seconds; discord.py's own session waits up to 5 minutes


class Writer:
    def __init__(self, client: discord.Client, timeout: float = WRITE_TIMEOUT) -> None:
        self._client = client
        self._timeout = timeout
        self._shown: Recent[int, str] = Recent()  # message id -> signature of what it shows

    async def post(self, permit: Permit, part: Part, reply_to: int | None = None,
                   once: str | None = None) -> int:
        """Post `part`; the new message's id. `once` names a message posted at most once (at
        most 25 characters): sent as the create's enforced nonce, so that Discord answers a
        second create with it within a few minutes with the first message, not a new one (a
        replica killed between a post and storing its id, then a survivor posting it again).
        That first message may show an older state: the caller edits it to `part`."""
        channel = self._client.get_partial_messageable(permit.channel_id)
        body = _body(part)
        if reply_to is not None:
            body["reference"] = discord.MessageReference(
                message_id=reply_to, channel_id=permit.channel_id, fail_if_not_exists=False)
        if once is not None:
            body["nonce"] = once  # discord.py sends it with enforce_nonce
        async with self._writing(permit):
            message = await channel.send(**body)
        if once is None:
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

    async def typing(self, permit: Permit) -> None:
        """Show the bot typing in the permit's channel (Discord: for 10 s, or until it posts)."""
        async with self._writing(permit):
            await self._client.get_partial_messageable(permit.channel_id).typing()

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
