"""Every Web API call the adapter makes, each inside its budgets; a 429 closes the budgets for
Retry-After seconds and the call is tried again (rendering the newest state at that time).

A 5xx or a call that times out means Slack is down: the budgets close for an exponentially
growing pause (core.edge.backoff) and the call is tried again, for up to `Backoff.patience`, so
the final state still arrives once Slack answers. Caveat: a post that timed out may have
been applied; Slack has no idempotency key, so its retry can show twice.
"""

from __future__ import annotations

import functools
import math
import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from bots.fields import items, obj, text
from core.edge.backoff import Outages
from core.edge.ratelimit import Limit, RateLimiter
from core.errors import InvalidInput

from ..render.blocks import Block, Payload
from . import budgets

log = logging.getLogger(__name__)
ATTEMPTS = 5
THREAD_PAGE = 200  # messages a conversations.replies call asks for
THREAD_PAGES = 5  # at most this many calls for one thread
TRIGGER_GONE = ("expired_trigger_id", "invalid_trigger_id", "exchanged_trigger_id")
TRIGGER_GONE_TEXT = "that click came too late to open a window (Slack allows 3 seconds): click again"
VIEW_GONE_TEXT = "that window is closed: open it again"
Call = Callable[[], Awaitable[AsyncSlackResponse]]
PACE = 20.0  # seconds of promises whose pace is expected to go on for a whole window


def retry_after(error: SlackApiError) -> float | None:
    """Seconds Slack asked us to wait, or None when the error is not a rate limit."""
    response = error.response
    if response.status_code != 429 and response.get("error") != "ratelimited":
        return None
    headers = {k.lower(): v for k, v in (response.headers or {}).items()}
    try:
        return max(1.0, float(headers.get("retry-after", 1)))
    except (TypeError, ValueError):
        return 1.0


def is_outage(error: Exception) -> bool:
    """A 5xx, a timeout or a lost connection: Slack may answer if asked again later."""
    if isinstance(error, SlackApiError):
        return error.response.status_code >= 500
    return isinstance(error, (TimeoutError, aiohttp.ClientError))


class Promises:
    """Calls of a workspace's budgets promised to its turns: each turn in flight will need one
    at its end, at once (its answer in its own message, its agent session back to active).
    An ordinary take of such a budget (a progress edit, a session opened) leaves as many as
    are owed, or, in a burst, as many as turns began within the budget's window: a burst
    that brought that many may bring as many more before the window has room again, and
    progress spent now would be missing then (this replica's turns; another's keep theirs).
    Where every turn makes a promise (`every_turn`: each live message's answer), the burst's
    pace counts too: the promises of the last PACE seconds, at that pace for a whole window.
    A burst spread over seconds (bench.load's ramp) otherwise lets its first seconds' progress
    spend the calls its later answers need, and their old messages wait for the window."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._owed: dict[str, int] = {}
        self._made: dict[str, deque[float]] = {}  # when each promise of the window was made
        self._paced: set[str] = set()  # keys promised by every turn

    def promise(self, limits: list[budgets.Budget], every_turn: bool = False) -> None:
        for key, _ in limits:
            self._owed[key] = self._owed.get(key, 0) + 1
            self._made.setdefault(key, deque()).append(self._clock())
            if every_turn:
                self._paced.add(key)

    def settle(self, limits: list[budgets.Budget]) -> None:
        for key, _ in limits:
            left = self._owed.get(key, 0) - 1
            if left > 0:
                self._owed[key] = left
            else:
                self._owed.pop(key, None)

    def of(self, key: str, limit: Limit) -> int:
        """What an ordinary take of `key` leaves."""
        made = self._made.get(key)
        if made is None:
            return self._owed.get(key, 0)
        now, window = self._clock(), limit.window or 1.0 / limit.per_second
        while made and made[0] <= now - window:
            made.popleft()
        if not made:
            del self._made[key]
            return self._owed.get(key, 0)
        kept = max(self._owed.get(key, 0), len(made))
        if key not in self._paced:
            return kept
        recent = sum(1 for at in made if at > now - PACE)
        return max(kept, math.ceil(recent * window / PACE))


class SlackSender:
    def __init__(self, client: AsyncWebClient, limiter: RateLimiter) -> None:
        self.client = client
        self.limiter = limiter
        self.outages = Outages()  # paced by the limiter's (injected) clock
        self.promised = Promises(limiter.clock)

    async def post(self, team: str, channel: str, thread_ts: str | None, payload: Payload,
                   metadata: dict[str, Any] | None = None) -> str:
        """chat.postMessage within the budgets; `metadata`: Slack's message metadata
        (`event_type`, `event_payload`), read back by `conversations.replies`."""
        response = await self._within(budgets.post(team, channel),
                                      self._post_call(channel, thread_ts, payload, metadata))
        return str(response["ts"])

    async def post_now(self, team: str, channel: str, thread_ts: str | None,
                       payload: Payload, metadata: dict[str, Any] | None = None) -> str | None:
        """chat.postMessage only if its budget has room now (else None: what is worth little
        never waits)."""
        response = await self.attempt(budgets.post(team, channel),
                                      self._post_call(channel, thread_ts, payload, metadata))
        return None if response is None else str(response["ts"])

    def _post_call(self, channel: str, thread_ts: str | None, payload: Payload,
                   metadata: dict[str, Any] | None = None) -> Call:
        return lambda: self.client.chat_postMessage(
            channel=channel, thread_ts=thread_ts, text=payload.text, blocks=payload.blocks,
            unfurl_links=False, unfurl_media=False, metadata=metadata)

    async def edit(self, team: str, channel: str, ts: str, render: Callable[[], Payload],
                   progress: bool = False, reserved: bool = False) -> None:
        """chat.update with what `render` gives once the budgets allow: rendering at send time
        is what makes the newest state win. `progress` edits (a live message following its
        run) queue behind every other edit for the workspace's budget; `reserved`: the
        workspace's call was taken already (`reserve(budgets.updates(team))`)."""
        async def call() -> AsyncSlackResponse:
            payload = render()
            return await self.client.chat_update(channel=channel, ts=ts, text=payload.text,
                                                 blocks=payload.blocks)
        await self._within(budgets.edit(team, channel, ts), call, urgent=not progress,
                           reserved=budgets.updates(team) if reserved else [])
        for key, limit in budgets.message_edit(team, channel, ts):
            self.limiter.answered(key, limit)  # Slack spaces a message's edits as they arrive

    async def delete(self, team: str, channel: str, ts: str, reserved: bool = False) -> None:
        limits = budgets.delete(team)
        await self._within(limits, lambda: self.client.chat_delete(channel=channel, ts=ts),
                           reserved=limits if reserved else [])

    async def retire(self, team: str, channel: str, ts: str, final: Payload) -> None:
        """Make a message final that another took over from (a turn's live message whose
        answer was posted beside it): deleted, or edited to `final`, by whichever of the
        workspace's chat.delete and chat.update budgets has a call first. Tier 3 each: using
        both, a burst's old messages are final twice as soon. It goes ahead of progress (an
        answer is shown already; the old message still says the turn is working)."""
        edit = [*budgets.message_edit(team, channel, ts), *budgets.updates(team)]
        while True:
            if await self.reserve(budgets.delete(team), urgent=True):
                return await self.delete(team, channel, ts, reserved=True)
            if self.ready(edit) and await self.reserve(budgets.updates(team), urgent=True):
                return await self.edit(team, channel, ts, lambda: final, reserved=True)
            await self.limiter.pause(min(self._delay(budgets.delete(team)), self._delay(edit)))

    def _delay(self, limits: list[budgets.Budget]) -> float:
        return max(self.limiter.delay(key, limit) for key, limit in limits)

    async def ephemeral(self, team: str, channel: str, user: str, text: str,
                        thread_ts: str | None = None, blocks: list[Block] | None = None) -> None:
        await self._within(budgets.ephemeral(team), lambda: self.client.chat_postEphemeral(
            channel=channel, user=user, text=text, thread_ts=thread_ts, blocks=blocks))

    async def upload(self, team: str, channel: str, thread_ts: str | None, filename: str,
                     content: bytes, comment: str) -> None:
        await self._within(budgets.upload(team), lambda: self.client.files_upload_v2(
            channel=channel, thread_ts=thread_ts, filename=filename, title=filename,
            content=content, initial_comment=comment))

    async def open_view(self, trigger_id: str, view: dict[str, Any]) -> None:
        # No budget wait here: a trigger_id is good for 3 s only (views.open is Tier 4).
        try:
            await self.client.views_open(trigger_id=trigger_id, view=view)
        except SlackApiError as error:
            if error.response.get("error") in TRIGGER_GONE:  # a refusal to tell the user, not a bug
                raise InvalidInput(TRIGGER_GONE_TEXT) from error
            raise

    async def update_view(self, team: str, view_id: str, view: dict[str, Any]) -> None:
        try:
            await self._within(budgets.views(team),
                               lambda: self.client.views_update(view_id=view_id, view=view))
        except SlackApiError as error:
            if error.response.get("error") == "not_found":  # the user closed it meanwhile
                raise InvalidInput(VIEW_GONE_TEXT) from error
            raise

    def ready(self, limits: list[budgets.Budget], within: float = 0.0) -> bool:
        """Whether every one of `limits` has a call to spend within `within` seconds
        (nothing is taken)."""
        return all(self.limiter.delay(key, limit) <= within for key, limit in limits)

    async def reserve(self, limits: list[budgets.Budget], urgent: bool = False) -> bool:
        """Take a call of each of `limits` now, if every one has one (every replica spends
        the same budgets on PostgreSQL: another may be quicker). What decides "now or another
        way" reserves, so that turns deciding at the same instant never all count on the one
        call left and then queue for it; `urgent` (an answer) may spend the calls kept back
        from progress."""
        if not self.ready(limits):
            return False
        taken = [await self.limiter.try_take(key, limit, urgent=urgent,
                                             keep=self.promised.of(key, limit))
                 for key, limit in limits]
        return all(taken)

    async def attempt(self, limits: list[budgets.Budget], call: Call,
                      urgent: bool = False) -> AsyncSlackResponse | None:
        """`call` only if its budgets have room now, else None: for what never waits (the
        loading status, a stream's start), dropped on a 429 or an outage. A refusal
        (SlackApiError) is raised for the caller to judge. `urgent`: as in `reserve`."""
        if not await self.reserve(limits, urgent=urgent):
            return None
        try:
            return await call()
        except (SlackApiError, TimeoutError, aiohttp.ClientError) as error:
            wait = retry_after(error) if isinstance(error, SlackApiError) else None
            if wait is None and not is_outage(error):
                raise
            for key, _ in limits:
                self.limiter.penalise(key, wait or 1.0)
            return None

    async def read(self, limits: list[budgets.Budget], call: Call) -> AsyncSlackResponse:
        """A read the caller can do without (a thread's earlier messages): its budgets are
        waited for, but it is tried once; a 429 closes them for Retry-After and, like any
        error, is raised for the caller to go on without it."""
        for key, limit in limits:
            await self.limiter.acquire(key, limit)
        try:
            return await call()
        except SlackApiError as error:
            if (wait := retry_after(error)) is not None:
                for key, _ in limits:
                    self.limiter.penalise(key, wait)
            raise

    async def thread(self, team: str, channel: str, thread_ts: str,
                     **options: Any) -> AsyncIterator[Mapping[str, Any]]:
        """A thread's messages, oldest first (conversations.replies, `options` added to each
        call): THREAD_PAGE a call, at most THREAD_PAGES calls (a longer thread is read from its
        start), each a `read` on the workspace's Tier 3 budget (its failure raised)."""
        cursor = ""
        for _ in range(THREAD_PAGES):
            call = functools.partial(self.client.conversations_replies, channel=channel,
                                     ts=thread_ts, limit=THREAD_PAGE, cursor=cursor or None,
                                     **options)
            response = await self.read(budgets.replies(team), call)
            for message in items(response.get("messages")):
                yield obj(message)
            cursor = text(obj(response.get("response_metadata")).get("next_cursor")) or ""
            if not response.get("has_more") or not cursor:
                return

    async def posted_with(self, team: str, channel: str, thread_ts: str,
                          event_type: str) -> list[tuple[str, Mapping[str, Any]]]:
        """The thread's messages posted with metadata of `event_type` (how a post whose
        replica died before storing its ts is found again): (ts, event_payload) each, oldest
        first. Raised: the thread could not be read."""
        found = []
        async for message in self.thread(team, channel, thread_ts, include_all_metadata=True):
            metadata = obj(message.get("metadata"))
            if metadata.get("event_type") == event_type and message.get("ts"):
                found.append((str(message["ts"]), obj(metadata.get("event_payload"))))
        return found

    async def start_stream(self, team: str, channel: str, thread_ts: str,
                           recipient: str | None, chunks: list[Block]) -> str | None:
        """chat.startStream if the workspace's Tier 2 budget has room now (else None: the turn
        takes the fallback rather than wait); `recipient` is required outside a DM. Nothing
        else spends that budget, so no calls are kept back from a start (urgent): a burst of
        turns streams as many as the tier allows."""
        response = await self.attempt(budgets.start_stream(team), lambda: self.client.chat_startStream(
            channel=channel, thread_ts=thread_ts, recipient_user_id=recipient,
            recipient_team_id=team if recipient else None, task_display_mode="timeline",
            chunks=chunks), urgent=True)
        return None if response is None else str(response["ts"])

    async def append_stream(self, team: str, channel: str, ts: str,
                            render: Callable[[], list[Block]]) -> None:
        """chat.appendStream with what `render` gives once the budget allows (progress: it
        queues behind everything urgent); nothing is sent when `render` gives nothing."""
        async def call() -> AsyncSlackResponse | None:
            chunks = render()
            if not chunks:
                return None
            return await self.client.chat_appendStream(channel=channel, ts=ts, chunks=chunks)
        await self._within(budgets.append_stream(team), call)  # type: ignore[arg-type]

    async def stop_stream(self, team: str, channel: str, ts: str, chunks: list[Block],
                          blocks: list[Block], urgent: bool = True,
                          session_status: str | None = None, reserved: bool = False) -> None:
        """chat.stopStream; `session_status` moves the thread's agent session with it;
        `reserved`: its call was taken already (`reserve(budgets.stop_stream(team))`)."""
        limits = budgets.stop_stream(team)
        await self._within(limits, lambda: self.client.chat_stopStream(
            channel=channel, ts=ts, chunks=chunks, blocks=blocks or None,
            session_status=session_status), urgent=urgent, reserved=limits if reserved else [])

    async def session_status(self, team: str, channel: str, thread_ts: str, status: str,
                             title: str | None, initiator: str | None, now: bool) -> bool:
        """agents.sessions.setStatus (creating the session); with `now`, only if its budget
        has room now beyond what is promised (an opening), else at once when there is room (a
        closing, urgent). Whether it was sent."""
        def call() -> Any:
            return self.client.agents_sessions_setStatus(
                channel_id=channel, thread_ts=thread_ts, status=status, title=title,
                initiator_user_id=initiator)
        if now:
            return await self.attempt(budgets.session_status(team), call) is not None
        await self._within(budgets.session_status(team), call, urgent=True)
        return True

    async def rename_session(self, team: str, channel: str, thread_ts: str, title: str) -> None:
        await self._within(budgets.agent_session(team, "agents.sessions.rename"),
                           lambda: self.client.agents_sessions_rename(
                               channel_id=channel, thread_ts=thread_ts, title=title))

    async def set_title(self, team: str, channel: str, thread_ts: str, title: str) -> None:
        await self._within(budgets.agent_session(team, "assistant.threads.setTitle"),
                           lambda: self.client.assistant_threads_setTitle(
                               channel_id=channel, thread_ts=thread_ts, title=title))

    async def set_status(self, team: str, channel: str, thread_ts: str, status: str,
                         loading: list[str]) -> bool:
        """assistant.threads.setStatus, only if its budget has room now; whether it was sent."""
        response = await self.attempt(budgets.status(team), lambda: self.client.assistant_threads_setStatus(
            channel_id=channel, thread_ts=thread_ts, status=status,
            loading_messages=loading or None))
        return response is not None

    async def set_status_when_allowed(self, team: str, channel: str, thread_ts: str, status: str,
                                      loading: Callable[[], list[str]]) -> None:
        """assistant.threads.setStatus once its budget allows, behind everything urgent (a
        turn's progress where nothing else shows it), with what `loading` gives then."""
        await self._within(budgets.status(team), lambda: self.client.assistant_threads_setStatus(
            channel_id=channel, thread_ts=thread_ts, status=status,
            loading_messages=loading() or None))

    async def suggest(self, team: str, channel: str, prompts: list[dict[str, str]]) -> None:
        await self._within(budgets.prompts(team), lambda: self.client.assistant_threads_setSuggestedPrompts(
            channel_id=channel, prompts=prompts))

    async def _within(self, limits: list[budgets.Budget], call: Call, urgent: bool = False,
                      reserved: list[budgets.Budget] | None = None) -> Any:
        """`call` inside `limits`; those `reserved` were taken already for the first try."""
        outage_key = limits[-1][0]  # the broadest budget: Slack is down for all of it
        rate_limited = 0
        taken = {key for key, _ in reserved or ()}
        while True:
            for key, limit in limits:
                if key not in taken:
                    await self.limiter.acquire(key, limit, urgent=urgent,
                                               keep=functools.partial(self.promised.of, key, limit))
            taken = set()
            try:
                result = await call()
            except (SlackApiError, TimeoutError, aiohttp.ClientError) as error:
                wait = self._pause(error, outage_key, rate_limited)
                if not is_outage(error):
                    rate_limited += 1
                for key, _ in limits:
                    self.limiter.penalise(key, wait)
            else:
                self.outages.recovered(outage_key)
                return result

    def _pause(self, error: Exception, outage_key: str, rate_limited: int) -> float:
        """How long to close the budgets before trying again; re-raises what retrying won't fix."""
        if is_outage(error):
            wait = self.outages.failed(outage_key)
            if wait is None:
                raise error
            log.warning("slack unavailable (%s): trying again in %.0fs", _describe(error), wait)
            return wait
        wait = retry_after(error) if isinstance(error, SlackApiError) else None
        if wait is None or rate_limited + 1 >= ATTEMPTS:
            raise error
        log.info("slack rate limit: waiting %.0fs (Retry-After)", wait)
        return wait


def _describe(error: Exception) -> str:
    if isinstance(error, SlackApiError):
        return f"HTTP {error.response.status_code}"
    return type(error).__name__


# --- what each workspace allows -----------------------------------------------------------
# What each workspace lets the app do, learnt from its answers: a workspace (or token) that
# refuses the stream methods or the loading status is remembered, so every later turn goes
# straight to the fallback, and the log says so once per workspace and feature.

STREAMING = "streaming"  # chat.startStream / appendStream / stopStream
STATUS = "status"  # assistant.threads.setStatus
SUGGESTED_PROMPTS = "suggested prompts"  # assistant.threads.setSuggestedPrompts
AGENT_SESSIONS = "agent sessions"  # agents.sessions.setStatus / rename (apps declared as agents)
THREAD_TITLES = "thread titles"  # assistant.threads.setTitle
# Errors that mean "not here, not for this app": asking again would get the same answer.
REFUSALS = frozenset({
    "unknown_method", "not_allowed", "not_allowed_token_type", "not_authorized", "missing_scope",
    "method_deprecated", "feature_not_enabled", "team_not_allowed", "access_denied",
})


class WorkspaceFeatures:
    def __init__(self) -> None:
        self._refused: set[tuple[str, str]] = set()

    def has(self, team: str, feature: str) -> bool:
        return (team, feature) not in self._refused

    def refused(self, team: str, feature: str, error: SlackApiError) -> bool:
        """Whether `error` is a refusal of `feature`; if so it is remembered (logged once)."""
        code = str(error.response.get("error") or "")
        if code not in REFUSALS:
            return False
        if (team, feature) not in self._refused:
            self._refused.add((team, feature))
            log.warning("slack workspace %s refuses %s (%s): using the fallback from now on",
                        team, feature, code)
        return True
