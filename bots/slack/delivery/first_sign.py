"""A turn's first sign: what a person sees at once after writing to the bot, shown before
anything of the turn is written to the database (in a burst of new conversations those writes
queue behind each other for seconds: bench/README.md, "Load").

- The thread's loading status ("is working…", "Thinking…"), when the workspace's status budget
  has a call now.
- Else, for a message that opens a thread (a mention outside any thread), a placeholder
  message on the channel's own post budget: the message the turn would post anyway, with the
  Stop button of the run it names before that run is written (`turns.new_run_id`). It goes
  into the turn's refs (`Slot.placeholder`), and the live message (live.py) takes it as its own:
  it is edited as the run goes while the workspace has few live messages open, as any posted
  one is, and shows the answer at the end.
- Else nothing, and the turn's own message or status follows as before.

A sign never waits for a budget (one that must wait is no first sign) and one Slack refuses
or drops is skipped. The line a status shows is noted (`ShownStatuses`), so the turn's own
loading status does not set it again. A sign whose message starts no run (a retry taken
already, nothing in it to answer, a refusal) is withdrawn: the placeholder deleted, the status
cleared unless a reply in the thread (a notice, a refusal) cleared it already.

A placeholder carries its run id in its metadata: when the replica that posted it died or
stopped before writing the turn, the message is handled again (intake.py) and the turn takes
that placeholder and its run id (`earlier`) instead of leaving it "working" forever.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import aiohttp
from slack_sdk.errors import SlackApiError

from core.edge.dedupe import Recent

from ..inbound import SlackPlace
from ..refs import Slot
from ..render.turn import LOADING, THINKING, placeholder
from .sender import STATUS, SlackSender, WorkspaceFeatures

log = logging.getLogger(__name__)
ThreadOf = tuple[str, str, str]  # team, channel, thread_ts


class ShownStatuses:
    """The loading status each thread's first sign set, until the turn's own loading status
    (live.py) takes it as what it shows."""

    def __init__(self, size: int = 1000) -> None:
        self._lines: Recent[ThreadOf, str] = Recent(size)

    def shown(self, thread: ThreadOf, line: str) -> None:
        self._lines.put(thread, line)

    def take(self, thread: ThreadOf) -> str | None:
        return self._lines.pop(thread)


SIGN = "hermes_first_sign"  # the metadata of a placeholder: {"run_id": …}


@dataclass(frozen=True, slots=True)
class Sign:
    """What the first sign was: the loading status, a placeholder message (`ts`), or nothing."""

    status: bool = False
    ts: str | None = None


class FirstSigns:
    def __init__(self, sender: SlackSender, features: WorkspaceFeatures,
                 statuses: ShownStatuses) -> None:
        self._sender = sender
        self._features = features
        self._statuses = statuses

    async def give(self, place: SlackPlace, asked_ts: str, run_id: str) -> Sign:
        """The first sign of the turn `run_id` answering the message `asked_ts` in `place`."""
        if await self._status(place):
            return Sign(status=True)
        if place.opened_by(asked_ts):
            return Sign(ts=await self._placeholder(place, run_id))
        return Sign()

    async def earlier(self, place: SlackPlace, asked_ts: str) -> tuple[Sign, str] | None:
        """The placeholder a replica posted for the message `asked_ts` before it died, and the
        run id it names; None when there is none (or the thread cannot be read now)."""
        if not place.opened_by(asked_ts):
            return None  # only a message that opens a thread gets a placeholder
        try:
            posted = await self._sender.posted_with(place.team, place.channel, asked_ts, SIGN)
        except (SlackApiError, TimeoutError, aiohttp.ClientError) as error:
            log.warning("first sign: thread %s not read for an earlier sign: %s", asked_ts, error)
            return None
        for ts, payload in posted:
            if isinstance(run_id := payload.get("run_id"), str) and run_id:
                return Sign(ts=ts), run_id
        return None

    @staticmethod
    def slot(place: SlackPlace, sign: Sign) -> Slot:
        """Where the turn shows: with the placeholder as its message, if that was the sign."""
        return Slot(place.team, place.channel, place.reply_thread, ts=sign.ts,
                    placeholder=sign.ts is not None)

    async def withdraw(self, place: SlackPlace, sign: Sign, replied: bool) -> None:
        """The message started no run; `replied`: the thread was told something since."""
        if sign.ts is not None:
            try:
                await self._sender.delete(place.team, place.channel, sign.ts)
            except (SlackApiError, TimeoutError, aiohttp.ClientError) as error:
                log.warning("first sign: placeholder %s not deleted: %s", sign.ts, error)
        elif sign.status and place.reply_thread:
            self._statuses.take((place.team, place.channel, place.reply_thread))
            if not replied:
                await self._set(place, "", [])

    async def _status(self, place: SlackPlace) -> bool:
        thread = place.reply_thread
        if thread is None or not self._features.has(place.team, STATUS):
            return False
        if not await self._set(place, LOADING, [THINKING]):
            return False
        self._statuses.shown((place.team, place.channel, thread), THINKING)
        return True

    async def _set(self, place: SlackPlace, status: str, loading: list[str]) -> bool:
        try:
            return await self._sender.set_status(place.team, place.channel,
                                                 place.reply_thread or "", status, loading)
        except SlackApiError as error:
            if not self._features.refused(place.team, STATUS, error):
                log.info("first sign: loading status not set: %s", error.response.get("error"))
            return False

    async def _placeholder(self, place: SlackPlace, run_id: str) -> str | None:
        try:
            return await self._sender.post_now(place.team, place.channel, place.reply_thread,
                                               placeholder(run_id),
                                               {"event_type": SIGN, "event_payload": {"run_id": run_id}})
        except SlackApiError as error:
            log.info("first sign: placeholder not posted: %s", error.response.get("error"))
            return None
