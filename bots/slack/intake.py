"""Where every Slack request enters: typed before a listener sees it, and acknowledged at
once when it is nothing for us (no 404 or 5xx for Slack to retry and count against the app).

`InboundMiddleware`, a bolt global middleware (it runs after bolt's signature check and
authorization), parses the body (`inbound.parse`), keeps the typed value in the request's
context for the listener (`typed`), and answers an ignored one itself, logged once at debug.
An event a replica took already (its `event_id` is in core's EventLedger: a retry, or the
same delivery load-balanced twice) is answered here too, and no listener sees it again.
A message is taken with its body (`Intake`): its event is marked done when its handling ends,
or, when the replica dies or stops first, handled again later (`SlackBot.recover`, which
dispatches the body once more, `RECOVERED` in its context).
The transports (http.py, Socket Mode in supervisor.py) first ask `readable`: a body bolt
itself cannot read (it indexes some fields while building a request) never reaches it.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Coroutine, Hashable
from typing import Any, TypeVar

from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.middleware.async_middleware import AsyncMiddleware
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.request.internals import parse_body
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError

from bots.fields import text
from core.conversation.refusals import log_refusal, not_yours, refusal_text
from core.edge.event_ledger import EventLedger
from core.errors import NotYours

from . import ids
from .delivery.sender import SlackSender
from .inbound import (
    Click,
    Ignored,
    Inbound,
    MessageEdit,
    MessageEvent,
    SlackPlace,
    SlashCommand,
    ViewSubmission,
    bolt_can_read,
    parse,
    place_of,
)
from .render.blocks import Payload, section

log = logging.getLogger(__name__)
KEY = "hermes_inbound"
INTAKE = "hermes_intake"
RECOVERED = "hermes_recovered"  # a message's event handled again (its replica never finished it)
T = TypeVar("T", bound=Inbound)


class Intake:
    """A message's event in the ledger, until its handling ends: when its listener starts
    nothing (`unless_handed`), else when the work it handed over (`Background.spawn`) ends."""

    def __init__(self, ledger: EventLedger, event_id: str) -> None:
        self._ledger = ledger
        self._event_id = event_id
        self.handed = False  # the listener gave the work to a task, which marks it done

    async def done(self) -> None:
        self._ledger.done("slack", self._event_id)

    async def unless_handed(self) -> None:
        if not self.handed:
            await self.done()


class InboundMiddleware(AsyncMiddleware):
    def __init__(self, ledger: EventLedger) -> None:
        self._ledger = ledger

    async def async_process(self, *, req: AsyncBoltRequest, resp: BoltResponse,
                            next: Callable[[], Awaitable[BoltResponse]]) -> BoltResponse | None:
        value = parse(req.body)
        if isinstance(value, Ignored):
            log.debug("slack: ignored %s", value.reason)
            return BoltResponse(status=200, body="")
        event_id = text(req.body.get("event_id"))
        message = isinstance(value, MessageEvent)
        if event_id and not req.context.get(RECOVERED) and not await self._ledger.first(
                "slack", event_id, json.dumps(req.body) if message else None):
            log.debug("slack: event %s was handled already", event_id)
            return BoltResponse(status=200, body="")
        req.context[KEY] = value
        if message and event_id:  # its listener (conversation.py) sees it done
            req.context[INTAKE] = Intake(self._ledger, event_id)
        return await next()


def intake_of(context: AsyncBoltContext) -> Intake | None:
    """The ledger's hold on this request's message, if it is one."""
    return context.get(INTAKE)


def inbound_of(context: AsyncBoltContext) -> Inbound:
    """The typed payload `InboundMiddleware` kept for this request's listener."""
    value = context.get(KEY)
    return value if value is not None else Ignored("no typed payload")


def typed(context: AsyncBoltContext, kind: type[T]) -> T:
    """The payload of this request's listener, which takes only a `kind`."""
    value = inbound_of(context)
    if not isinstance(value, kind):  # a listener registered for what it cannot take
        raise TypeError(f"a {kind.__name__} listener was given {type(value).__name__}")
    return value


async def retired(ack: AsyncAck, context: AsyncBoltContext) -> None:
    """A click on a button of ours this version no longer has (an old message's)."""
    await ack()
    log.debug("slack: ignored a click on %s, a retired button", typed(context, Click).action_id)


def readable(raw: str, content_type: str | None) -> bool:
    """Whether bolt can build a request of this HTTP body (parsed as bolt parses it)."""
    try:
        body = parse_body(raw, content_type)
    except ValueError:  # JSON that is not JSON
        return False
    return bolt_can_read(body)


def unreadable(what: str) -> None:
    log.debug("slack: acknowledged %s that slack-bolt cannot read", what)


# --- the error boundary -------------------------------------------------------------------
# The one error boundary of every event and interaction: bolt's `app.error`.
#
# A listener raises; `ErrorBoundary.on_error`, registered with `app.error`, logs the error and
# tells the user with the refusal vocabulary (core.conversation.refusals): in the answer to
# the request itself when it can carry words (a slash command's reply, a modal's field error),
# else through the Web API where the request came from (an ephemeral for who clicked or
# typed, a reply in the thread for a message). Work that runs after Slack got its
# acknowledgement (within 3 s) runs in `Background` tasks, and what they raise reaches the
# same handler. Cancellation goes through.

Reply = Callable[[str], Awaitable[None]]
ReplyTo = Callable[[Inbound], Reply]  # where the words about a request go


def refusal(error: BaseException) -> str:
    """What a refused user is told; a click on someone else's turn names who may."""
    if isinstance(error, NotYours):
        return not_yours(error.asker, mention=f"<@{error.asker}>" if error.asker else None)
    return refusal_text(error)


def explain(error: Exception, what: str) -> str:
    """Log `error` as core logs every refusal (`log_refusal`); the user's text."""
    log_refusal(log, error, what)
    return refusal(error)


def answer_carrying(inbound: Inbound, text: str) -> BoltResponse | None:
    """The acknowledgement itself, for requests whose answer can carry the words."""
    body: dict[str, Any]
    if isinstance(inbound, SlashCommand):
        body = {"text": text}
    elif isinstance(inbound, ViewSubmission):  # the modal stays open, the error on its field
        body = {"response_action": "errors", "errors": {ids.ANSWER_BLOCK: text}}
    else:
        return None
    return BoltResponse(status=200, body=json.dumps(body),
                        headers={"content-type": "application/json;charset=utf-8"})


class ErrorBoundary:
    def __init__(self, reply_to: ReplyTo) -> None:
        self._reply_to = reply_to

    async def on_error(self, error: Exception, context: AsyncBoltContext) -> BoltResponse:
        """bolt's global error handler (`app.error`): what a listener raised."""
        inbound = inbound_of(context)
        text = explain(error, type(inbound).__name__)
        answer = answer_carrying(inbound, text)
        if answer is not None:
            return answer
        await tell(self._reply_to(inbound), text, type(inbound).__name__)
        return BoltResponse(status=200, body="")  # acknowledged: Slack must not retry it

    async def guarded(self, work: Awaitable[None], reply: Reply, what: str) -> None:
        """Run `work` (after the ack); what it raises is handled as `on_error` does."""
        try:
            await work
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - the boundary: every error is told
            await tell(reply, explain(error, what), what)


async def tell(reply: Reply, text: str, what: str) -> None:
    try:
        await reply(text)
    except asyncio.CancelledError:
        raise
    except (TimeoutError, SlackApiError, OSError) as error:
        log.warning("%s: could not tell the user (%s)", what, error)


async def _after(before: asyncio.Task[Any] | None, work: Coroutine[Any, Any, None]) -> None:
    """`work` once `before` (the previous task of the same thread) has ended."""
    try:
        if before is not None:
            await asyncio.wait([before])  # wait() never cancels `before` if we are cancelled
    except asyncio.CancelledError:
        work.close()
        raise
    await work


async def _then(work: Coroutine[Any, Any, None], then: Callable[[], Awaitable[None]]) -> None:
    await work
    await then()


class Background:
    """Tasks started after an ack, inside the error boundary; those of one `queue` (a thread)
    run one after another, in the order Slack delivered them. `close` cancels the ones still
    running."""

    def __init__(self, boundary: ErrorBoundary) -> None:
        self.boundary = boundary
        self._tasks: set[asyncio.Task[Any]] = set()
        self._last: dict[Hashable, asyncio.Task[Any]] = {}

    def spawn(self, work: Coroutine[Any, Any, None], reply: Reply, what: str,
              queue: Hashable | None = None, intake: Intake | None = None) -> None:
        """`intake`: the message's event, marked done when `work` ends (not when cancelled:
        the event is then handled again, by this replica's successor or another)."""
        before = self._last.get(queue) if queue is not None else None
        guarded = self.boundary.guarded(work, reply, what)
        if intake is not None:
            intake.handed = True
            guarded = _then(guarded, intake.done)
        task = asyncio.create_task(_after(before, guarded), name=f"slack:{what}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if queue is not None:
            self._last[queue] = task
            task.add_done_callback(lambda done: self._forget(queue, done))

    def _forget(self, queue: Hashable, task: asyncio.Task[Any]) -> None:
        if self._last.get(queue) is task:
            del self._last[queue]

    async def idle(self) -> None:
        """Until every task started so far (and any they start) has ended."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*list(self._tasks), return_exceptions=True)


# --- where the words go -------------------------------------------------------------------
# Where the error boundary's words go: the thread, or only the user who clicked.

def reply_to(sender: SlackSender, inbound: Inbound) -> Reply:
    """Where the error boundary tells about a request: who clicked or typed a command
    (privately), the thread of a message; nobody for the rest (the log has it)."""
    if isinstance(inbound, Click):
        return to_clicker(sender, inbound)
    if isinstance(inbound, MessageEvent | MessageEdit):
        return in_thread(sender, place_of(inbound.team, inbound.channel, inbound.ts,
                                            inbound.thread_ts, inbound.channel_type))
    if isinstance(inbound, SlashCommand):
        return to_user(sender, inbound.team, inbound.channel, inbound.user)
    return unheard


def in_thread(sender: SlackSender, place: SlackPlace) -> Reply:
    async def reply(text: str) -> None:
        await sender.post(place.team, place.channel, place.reply_thread,
                                   Payload(text, [section(text)]))
    return reply


def to_clicker(sender: SlackSender, click: Click) -> Reply:
    async def reply(text: str) -> None:
        if click.channel:
            await sender.ephemeral(click.team, click.channel, click.user, text, click.thread_ts)
    return reply


def to_user(sender: SlackSender, team: str, channel: str, user: str) -> Reply:
    async def reply(text: str) -> None:
        await sender.ephemeral(team, channel, user, text)
    return reply


async def unheard(text: str) -> None:
    """For work no user waits on (a tidy-up, suggested prompts): the boundary logs a failure."""
