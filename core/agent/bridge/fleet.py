"""`BridgeFleet`: several Bridges as one `Bridge` (HERMES_BRIDGE_URL lists them, comma-separated).

- **Placement by session.** A run goes to the Bridge that ranks first for its session among
  those up (rendezvous hashing of the session id over the Bridges' names), so a session's
  turns stay on one Bridge, whose agent of it stays warm, for as long as that Bridge is up; a
  Bridge going down moves only its own sessions, and they move back when it returns.
- **The holder is stored.** The Bridge a run was placed on is written on its assistant message
  (`chat_message.bridge`) before the run is sent, so a Stop, an answer or a replay of it goes
  to that Bridge from any replica.
- **A Bridge that is down is skipped.** One that cannot be reached is passed over by new runs
  for `cooldown` seconds (then tried again). A start it never answered goes to the next Bridge;
  a run it held and can no longer be followed on is lost to it (`RunLost`), so the runner
  continues it on another from its stored checkpoint (core/runtime/continuation.py), and a
  question of it answered meanwhile becomes that continuation's answer.

With one Bridge the fleet behaves as that Bridge does: its failures are reported as they are.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from core.agent.bridge.client import BridgeClient
from core.agent.bridge.port import Bridge, LastSeq
from core.agent.bridge.stream import Sleep, StreamPolicy
from core.agent.bridge.types import Health, Memory, RunRequest, RunState
from core.agent.events import Event
from core.edge.dedupe import Recent
from core.edge.urls import redacted_url
from core.errors import BridgeUnavailable, NotFound, RunLost
from core.store.models import ChatMessage, ClarifyPause
from core.store.outage import is_outage

log = logging.getLogger(__name__)
T = TypeVar("T")
COOLDOWN = 10.0  # seconds a Bridge that failed is passed over before it is tried again
# With another Bridge to go on with, a stream gives up on its Bridge after ~5 s of failed
# reconnects (0.5, 1, 2, 2 s) instead of the ~60 s a lone Bridge is given to come back.
FAILOVER = StreamPolicy(backoff_base=0.5, backoff_cap=2.0, max_reconnects=4)


@dataclass(frozen=True, slots=True)
class BridgeReport:
    """One Bridge as health sees it: its name, whether it answered, and what it said."""

    name: str
    health: Health | None
    reason: str | None = None


class BridgeFleet:
    """The Bridges by name (their URLs), in configuration order; each a `Bridge`."""

    def __init__(self, members: Mapping[str, Bridge], *, cooldown: float = COOLDOWN,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        if not members:
            raise ValueError("a fleet needs at least one Bridge")
        self.members = dict(members)
        self.cooldown = cooldown
        self._monotonic = monotonic
        self._down_until: dict[str, float] = {}
        self._holders: Recent[str, str] = Recent()  # run id -> Bridge, as stored

    @classmethod
    def over_http(cls, urls: Iterable[str], *, token: str | None = None,
                  sleep: Sleep = asyncio.sleep) -> BridgeFleet:
        """A fleet of HTTP clients (one per URL, each with the same BRIDGE_TOKEN), each named
        by its URL without credentials (the name is shown in health, metrics and logs)."""
        listed = list(urls)
        policy = FAILOVER if len(listed) > 1 else None
        return cls({redacted_url(url): BridgeClient(url, token=token, policy=policy, sleep=sleep)
                    for url in listed})

    async def __aenter__(self) -> BridgeFleet:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # --- placement --------------------------------------------------------------------

    def is_up(self, name: str) -> bool:
        """Whether new runs may go to this Bridge (it has not failed in the last cooldown)."""
        return self._monotonic() >= self._down_until.get(name, 0.0)

    def ranked(self, session_id: str) -> list[str]:
        """Every Bridge, in the order a run of this session tries them: those up first."""
        order = sorted(self.members, key=lambda name: _score(name, session_id), reverse=True)
        return [n for n in order if self.is_up(n)] + [n for n in order if not self.is_up(n)]

    def place(self, session_id: str) -> str:
        """The Bridge a new run of this session goes to."""
        return self.ranked(session_id)[0]

    def holding(self, run_ids: Iterable[str]) -> dict[str, int]:
        """How many of these runs each Bridge holds, as far as this process knows."""
        counts = dict.fromkeys(self.members, 0)
        for run_id in run_ids:
            if (name := self._holders.get(run_id)) in counts:
                counts[name] += 1
        return counts

    # --- streams ----------------------------------------------------------------------

    def stream(self, request: RunRequest, last_seq: LastSeq | None = None) -> AsyncIterator[Event]:
        """Start the run on its session's Bridge, or the next one up if that one cannot be
        reached before it answers; RunLost if its Bridge goes down once it streamed."""
        return self._stream(request, last_seq)

    async def _stream(self, request: RunRequest, last_seq: LastSeq | None) -> AsyncIterator[Event]:
        for name in self.ranked(request.session_id):
            await self._hold(request.run_id, name)
            streamed = False
            try:
                async for event in self.members[name].stream(request, last_seq):
                    streamed = True
                    yield event
                return
            except BridgeUnavailable as error:
                self._lost(name, error)
                if not self._another_up(name):
                    raise
                if streamed:
                    raise RunLost(f"the Bridge {name} holding it went away: {error.message}") from error

    def follow(self, run_id: str, last_seq: LastSeq | None = None) -> AsyncIterator[Event]:
        """Follow the run on the Bridge that holds it."""
        return self._follow(run_id, last_seq)

    async def _follow(self, run_id: str, last_seq: LastSeq | None) -> AsyncIterator[Event]:
        name = await self._holder(run_id)
        try:
            async for event in self.members[name].follow(run_id, last_seq):
                yield event
        except BridgeUnavailable as error:
            self._lost(name, error)
            if not self._another_up(name):
                raise
            raise RunLost(f"the Bridge {name} holding it went away: {error.message}") from error

    # --- calls about one run ----------------------------------------------------------

    async def run_state(self, run_id: str) -> RunState:
        """Where the run stands on its Bridge; "unknown" when that Bridge is down and another
        is up (the run then goes on elsewhere from its checkpoint)."""
        name = await self._holder(run_id)
        try:
            return await self.members[name].run_state(run_id)
        except BridgeUnavailable as error:
            self._unless_another_up(name, error)
            return RunState(run_id=run_id, state="unknown")

    async def abort(self, run_id: str) -> str:
        """Stop the run on its Bridge; NotFound when that Bridge is down and another is up
        (nothing runs it that anyone follows: its stop is recorded here)."""
        name = await self._holder(run_id)
        try:
            return await self.members[name].abort(run_id)
        except BridgeUnavailable as error:
            self._unless_another_up(name, error)
            raise NotFound(f"the Bridge {name} holding run {run_id} is unreachable") from error

    async def answer_clarify(self, clarify_id: str, answer: str) -> str:
        """Answer on the Bridge holding the question's run; NotFound when that Bridge is down
        and another is up (the answer is kept: the run continues elsewhere with it)."""
        run_ids = await ClarifyPause.filter(clarify_id=clarify_id).limit(1).values_list(
            "run_id", flat=True)
        name = await self._holder(str(run_ids[0])) if run_ids else next(iter(self.members))
        try:
            return await self.members[name].answer_clarify(clarify_id, answer)
        except BridgeUnavailable as error:
            self._unless_another_up(name, error)
            raise NotFound(f"the Bridge {name} holding question {clarify_id} is unreachable") from error

    async def steer(self, run_id: str, text: str) -> bool:
        """Guidance to the Bridge holding the run; NotFound when that Bridge is down."""
        name = await self._holder(run_id)
        try:
            return await self.members[name].steer(run_id, text)
        except BridgeUnavailable as error:
            self._unless_another_up(name, error)
            raise NotFound(f"the Bridge {name} holding run {run_id} is unreachable") from error

    async def answer_approval(self, run_id: str, approval_id: str, decision: str) -> str:
        """Decide on the Bridge holding the run; NotFound when that Bridge is down and another
        is up (the decision is kept: the run continues elsewhere with it)."""
        name = await self._holder(run_id)
        try:
            return await self.members[name].answer_approval(run_id, approval_id, decision)
        except BridgeUnavailable as error:
            self._unless_another_up(name, error)
            raise NotFound(f"the Bridge {name} holding run {run_id} is unreachable") from error

    # --- calls about a session --------------------------------------------------------

    async def reset_session(self, session_id: str) -> bool:
        """Drop the session's agent on every Bridge that answers (any may have loaded it)."""
        results = await asyncio.gather(
            *(self._call(name, lambda b: b.reset_session(session_id)) for name in self.members),
            return_exceptions=True)
        answered = [r for r in results if isinstance(r, bool)]
        if not answered:
            raise next(r for r in results if isinstance(r, BaseException))
        return any(answered)

    async def get_memory(self, session_id: str) -> Memory:
        """MEMORY.md and USER.md as the session's Bridge keeps them."""
        return await self._call(self.place(session_id), lambda b: b.get_memory(session_id))

    async def set_memory(self, session_id: str, *, memory: str | None = None,
                         user: str | None = None) -> Memory:
        name = self.place(session_id)
        return await self._call(name, lambda b: b.set_memory(session_id, memory=memory, user=user))

    # --- health -----------------------------------------------------------------------

    async def health(self) -> Health:
        """The health of the first Bridge that answers; BridgeUnavailable if none does."""
        reports = await self.reports()
        for report in reports:
            if report.health is not None:
                return report.health
        raise BridgeUnavailable("; ".join(f"{r.name}: {r.reason}" for r in reports))

    async def reports(self, timeout: float | None = None) -> list[BridgeReport]:
        """Each Bridge's health, asked of all at once (each within `timeout` seconds); one
        that answers is up again."""
        return list(await asyncio.gather(*(self._report(n, timeout) for n in self.members)))

    async def aclose(self) -> None:
        """Close every member that has something to close (a BridgeClient's connections)."""
        for bridge in self.members.values():
            close = getattr(bridge, "aclose", None)
            if close is not None:
                await close()

    # --- internals --------------------------------------------------------------------

    async def _report(self, name: str, timeout: float | None) -> BridgeReport:
        try:
            health = await asyncio.wait_for(self.members[name].health(), timeout)
        except TimeoutError:
            return BridgeReport(name, None, "no answer in time")
        except BridgeUnavailable as error:
            self._lost(name, error)
            return BridgeReport(name, None, error.message)
        self._down_until.pop(name, None)
        return BridgeReport(name, health)

    async def _call(self, name: str, call: Callable[[Bridge], Awaitable[T]]) -> T:
        try:
            return await call(self.members[name])
        except BridgeUnavailable as error:
            self._lost(name, error)
            raise

    async def _hold(self, run_id: str, name: str) -> None:
        """Store where the run goes before it is sent (a replica that takes it over asks there)."""
        if self._holders.get(run_id) == name:
            return
        self._holders.put(run_id, name)
        try:
            await ChatMessage.filter(run_id=run_id).update(bridge=name)
        except Exception as error:  # the run goes on; who holds it is found by asking each
            if not is_outage(error):
                raise
            log.warning("could not store that %s holds run %s: database unreachable", name, run_id)

    async def _holder(self, run_id: str) -> str:
        """The Bridge holding the run: as stored, else (a run started before the fleet knew
        it, or by a Bridge no longer listed) the one that knows it, else the first."""
        cached = self._holders.get(run_id)
        if cached is not None and cached in self.members:
            return cached
        rows = await ChatMessage.filter(run_id=run_id).limit(1).values_list("bridge", flat=True)
        name = str(rows[0]) if rows and rows[0] in self.members else await self._asking_each(run_id)
        self._holders.put(run_id, name)
        return name

    async def _asking_each(self, run_id: str) -> str:
        names = list(self.members)
        if len(names) == 1:
            return names[0]
        for name in names:
            try:
                if (await self.members[name].run_state(run_id)).state != "unknown":
                    return name
            except BridgeUnavailable as error:
                self._lost(name, error)
        return names[0]

    def _lost(self, name: str, error: BridgeUnavailable) -> None:
        if self.is_up(name):
            log.warning("bridge %s unreachable, passed over for %.0f s: %s", name,
                        self.cooldown, error.message)
        self._down_until[name] = self._monotonic() + self.cooldown

    def _another_up(self, name: str) -> bool:
        return any(self.is_up(other) for other in self.members if other != name)

    def _unless_another_up(self, name: str, error: BridgeUnavailable) -> None:
        """Mark the Bridge down; re-raise when no other one could take its runs over."""
        self._lost(name, error)
        if not self._another_up(name):
            raise error


def _score(name: str, session_id: str) -> int:
    digest = hashlib.blake2b(f"{name}\n{session_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")
