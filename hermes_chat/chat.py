"""`hermes-chat chat`: talk to the agent in a terminal, as a client of the running service.

Everything goes through the admin API of `serve` (hermes_chat/service_client.py): the chat's
sessions and runs are the service's, visible to operators and to the bots' replicas, and a run
left going (Ctrl-C, then "leave it") is picked up again with `--session N`. Each line typed is a
turn; the run's thinking areas print as they change (status, tools, todos), questions and tool
approvals are answered at a prompt, and the answer is printed once. docs/terminal-chat.md.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, TextIO

from core.conversation import presenting
from core.conversation.presenting import APPROVAL_LABELS
from core.conversation.vocabulary import (
    ApprovalRequest,
    ClarifyRequest,
    Event,
    MessageStatus,
    PauseKind,
    PauseStatus,
    PauseView,
    RunUpdate,
    ThinkingState,
    is_terminal,
    reduce,
)
from hermes_chat.service_client import Json, ServiceClient, ServiceDown, ServiceError
from hermes_chat.terminal_input import EOF, Interrupted, Interrupts, LineReader
from hermes_chat.terminal_view import TerminalView

PROMPT = "you> "
HISTORY_MESSAGES = 6  # shown when a conversation is taken up again
HISTORY_CHARS = 300  # of each of them
RETRY_SECONDS = 1.0  # between two tries to reach a service that went away
EXIT_SERVICE_DOWN = 3  # nothing answers at the service's address
EXIT_NO_SESSION = 4  # --session names no session
QUIT_WORDS = frozenset({"exit", "quit", "/quit", "/exit"})
HELP = """\
  Type a message and press Enter to send it to the agent. Commands:
    /help       this help
    /stop       stop the run of this conversation
    /new        start a new conversation with your next message
    /sessions   list conversations (take one up with: hermes-chat chat --session N)
    /quit       leave (also: exit, quit, Ctrl-D); a run left going goes on
  A line starting with // is sent as a message starting with / (//etc/hosts -> /etc/hosts).
  Ctrl-C during a run: stop it, or leave it running and come back later."""


class StreamCut(Exception):
    """The run's stream ended while the run goes on (the service is stopping, say)."""


class Leave(Exception):
    """The person leaves the chat (a run may go on without them)."""


@dataclass
class Following:
    """A run this terminal follows: what it folded so far, and what it asked already."""

    run_id: str
    session_id: int
    message_id: int
    status: MessageStatus
    position: int | None = None
    state: ThinkingState = field(default_factory=ThinkingState)
    asked: set[str] = field(default_factory=set)

    def update(self, status: MessageStatus | None = None, error: str | None = None) -> RunUpdate:
        return RunUpdate(self.run_id, self.session_id, 0, self.message_id, status or self.status,
                         self.state, position=self.position, error=error)


class Conversation:
    """The terminal's side of one or more sessions of the service."""

    def __init__(self, client: ServiceClient, reader: LineReader, interrupts: Interrupts,
                 out: TextIO, session_id: int | None = None) -> None:
        self.client = client
        self.reader = reader
        self.interrupts = interrupts
        self.out = out
        self.session_id = session_id

    async def run(self) -> int:
        """The loop: show where the session is, then read, send, follow, until the person
        leaves; the exit code."""
        try:
            if self.session_id is not None:
                await self._take_up(self.session_id)
            while True:
                try:
                    await self._turn()
                except ServiceError as error:  # refused, or the service went away: say so
                    self._say(f"  ! {error.message}")
        except Leave:
            self._goodbye()
            return 0

    async def _turn(self) -> None:
        self._say(PROMPT, end="")
        try:
            line = await self.interrupts.guard(self.reader.read_line())
        except Interrupted:
            self._say()
            raise Leave() from None
        if line == EOF:
            self._say()
            raise Leave()
        text = line.strip()
        if not text:
            return
        command = command_of(text)
        if command is None:
            await self._send(text[1:] if text.startswith("//") else text)
        else:
            await self._command(command)

    async def _command(self, command: str) -> None:
        actions: dict[str, Callable[[], Any]] = {
            "/help": self._help, "/stop": self._stop, "/new": self._new,
            "/sessions": self._sessions,
        }
        if command in QUIT_WORDS:
            raise Leave()
        action = actions.get(command)
        if action is None:
            self._say(f"  ! unknown command {command}: /help lists them (start a message "
                      "with // to send a line beginning with /)")
            return
        result = action()
        if result is not None:
            await result

    def _help(self) -> None:
        self._say(HELP)

    def _new(self) -> None:
        self.session_id = None
        self._say("  a new conversation starts with your next message")

    async def _sessions(self) -> None:
        await print_sessions(self.client, self.out)

    async def _stop(self) -> None:
        run = await self._run_in_flight()
        if run is None:
            self._say("  nothing to stop: no run of this conversation is going")
            return
        if await self._stop_run(run["runId"]):
            self._say("  (⏹ stopped)")

    async def _send(self, text: str) -> None:
        created = self.session_id is None
        if created:
            if not await self._agent_answers():
                return
            self.session_id = await self.client.create_session()
        assert self.session_id is not None
        try:
            started = await self.client.start_run(self.session_id, text)
        except ServiceError as error:
            if created:  # nothing of it is left: no empty session piles up
                await self.client.delete_session(self.session_id)
                self.session_id = None
            busy = " (/stop stops it)" if error.code == "busy" else ""
            self._say(f"  ! {error.message}{busy}")
            return
        if created:
            self._say(f"  (session {self.session_id})")
        await self._follow(Following(started["runId"], self.session_id, started["messageId"],
                                     MessageStatus(started["status"]), started["position"]))

    async def _agent_answers(self) -> bool:
        health = await self.client.health()
        if health.get("bridge") == "ok":
            return True
        self._say(f"  ! the agent service (Hermes Bridge) does not answer ({health.get('bridge')})"
                  ": nothing was sent; try again once `serve` reports it up")
        return False

    async def _take_up(self, session_id: int) -> None:
        """Show the end of the conversation, and follow its run if one is going."""
        messages, more = await self.client.messages(session_id, HISTORY_MESSAGES)
        if more:
            self._say("  … (earlier messages not shown)")
        for message in messages:
            self._say(_history_line(message))
        last = messages[-1] if messages else None
        if last is not None and last["role"] == "ASSISTANT" and last["status"] in IN_FLIGHT:
            await self._follow(Following(last["runId"], session_id, last["id"],
                                         MessageStatus(last["status"])), catching_up=True)

    async def _run_in_flight(self) -> Json | None:
        if self.session_id is None:
            return None
        messages, _ = await self.client.messages(self.session_id, 1)
        return next((m for m in messages if m["role"] == "ASSISTANT" and m["status"] in IN_FLIGHT
                     and m["runId"]), None)

    async def _follow(self, run: Following, catching_up: bool = False) -> None:
        """Show the run live until it ends; Ctrl-C asks whether to stop it or leave it, and a
        lost service is waited for (a restart of `serve` does not end a run)."""
        view = TerminalView(self.out)
        if not catching_up:
            view.show(run.update())
        cut = False
        while True:
            try:
                if cut:  # not at once: a stream that keeps ending is not hammered
                    await self.interrupts.guard(asyncio.sleep(RETRY_SECONDS))
                await self._watch(run, view, catching_up)
                return
            except Interrupted:
                self._say()
                await self._offer(run)
            except ServiceDown:
                await self._wait_for_service()
            except StreamCut:
                cut = True
                continue
            cut = False
            catching_up = True  # from the start again: a question left open is asked again

    async def _watch(self, run: Following, view: TerminalView, catching_up: bool) -> None:
        """Fold the run's events into its state and show them; catching up, the events up to
        where the run is now are folded without being shown again."""
        caught = run.state.last_seq
        if catching_up:
            state = await self.client.run_state(run.run_id)
            caught = max(caught, int(state["thinking"]["lastSeq"]))
            run.state = ThinkingState()
        # after `caught`: a question asked since is either still open here or after `caught`
        pending = await self._pending_questions(run.run_id)
        stream = self.client.events(run.run_id, run.state.last_seq)
        try:
            while True:
                event = await self.interrupts.guard(anext(stream, None))
                if event is None:
                    break
                run.state = reduce(run.state, event)
                run.status = MessageStatus.RUNNING
                if event.seq >= caught and not is_terminal(event):  # the end: `_finish`
                    view.show(run.update())
                await self._ask(run, event, pending, caught)
        finally:
            await stream.aclose()  # type: ignore[attr-defined]  # an async generator
        await self._finish(run, view)

    async def _wait_for_service(self) -> None:
        self._say(f"  ! the service on {self.client.url} went away: waiting for it to come "
                  "back (start it with ./scripts/serve; Ctrl-C to leave)")
        while True:
            try:
                await self.client.health()
                self._say("  (the service is back)")
                return
            except ServiceDown:
                pass
            try:
                await self.interrupts.guard(asyncio.sleep(RETRY_SECONDS))
            except Interrupted:
                raise Leave() from None

    async def _pending_questions(self, run_id: str) -> set[str]:
        """Ids of the questions and approvals of the run still waiting for an answer."""
        state = await self.client.run_state(run_id)
        ids = {state["pendingClarify"]["clarifyId"]} if state["pendingClarify"] else set()
        return ids | {a["approvalId"] for a in await self.client.approvals()
                      if a["runId"] == run_id}

    async def _ask(self, run: Following, event: Event, pending: set[str], caught: int) -> None:
        if not isinstance(event, (ClarifyRequest, ApprovalRequest)):
            return
        question_id = event.clarify_id if isinstance(event, ClarifyRequest) else event.approval_id
        if question_id in run.asked or (event.seq <= caught and question_id not in pending):
            return  # answered before (here, or before this terminal came)
        if isinstance(event, ClarifyRequest):
            await self._answer(run, event)
        else:
            await self._decide(run, event)
        run.asked.add(question_id)

    async def _answer(self, run: Following, event: ClarifyRequest) -> None:
        self._say(f"\n  ? {event.question}")
        for number, choice in enumerate(event.choices, start=1):
            self._say(f"    {number}. {choice}")
        answer = ""
        while not answer:
            answer = await self._read_answer("  your answer (a number, or your own words): ")
        if answer.isdigit() and 1 <= int(answer) <= len(event.choices):
            answer = event.choices[int(answer) - 1]
        await self._reply(self.client.resume(run.run_id, event.clarify_id, answer))

    async def _decide(self, run: Following, event: ApprovalRequest) -> None:
        """A tool approval: anything but a number or name of an offered decision is Deny."""
        pause = PauseView(0, event.approval_id, event.command, event.choices,
                          PauseStatus.UNANSWERED, kind=PauseKind.APPROVAL, tool=event.tool,
                          reason=event.reason)
        self._say(f"\n  {presenting.approval_question(pause)}:\n    {event.command}")
        for number, decision in enumerate(event.choices, start=1):
            self._say(f"    {number}. {APPROVAL_LABELS.get(decision, decision)}")
        typed = (await self._read_answer("  your decision (a number): ")).lower()
        decided = await self._reply(self.client.decide(event.approval_id,
                                                       _decision(typed, event.choices)))
        if decided is not None:
            said = presenting.approval_outcome(PauseView(
                0, event.approval_id, event.command, event.choices, PauseStatus.ANSWERED,
                answer=decided["decision"], answered_by=decided["decidedBy"]))
            self._say(f"  {said}")

    async def _reply(self, call: Any) -> Json | None:
        try:
            return dict(await call)
        except ServiceDown:
            raise
        except ServiceError as error:  # e.g. answered meanwhile in Slack: say by whom
            self._say(f"  ! {error.message}")
            return None

    async def _read_answer(self, prompt: str) -> str:
        self.reader.discard_typeahead()
        self._say(prompt, end="")
        line = await self.interrupts.guard(self.reader.read_line())
        if line == EOF:
            self._say()
            raise Leave()
        return line.strip()

    async def _finish(self, run: Following, view: TerminalView) -> None:
        state = await self.client.run_state(run.run_id)
        status = MessageStatus(state["status"])
        if status.value in IN_FLIGHT and not run.state.terminal:
            raise StreamCut()  # the stream ended before the run: follow it again
        if run.state.final_text is not None:
            status = MessageStatus.SUCCESS
        elif run.state.error is not None:  # aborted: stopped, unless a spend limit stopped it
            stopped = run.state.error.code == "aborted" and status != MessageStatus.FAILED
            status = MessageStatus.STOPPED if stopped else MessageStatus.FAILED
        failure = run.state.error.message if run.state.error is not None else None
        run.state = _timed(run.state, float(state["thinking"]["elapsedSeconds"]))
        view.finish(run.update(status, state["error"] or failure))

    async def _offer(self, run: Following) -> None:
        """Ctrl-C during a run: stop it, leave it going (and the chat), or keep watching."""
        self._say(f"  The run goes on unless you stop it.\n"
                  f"    s  stop it\n"
                  f"    l  leave it running and quit (come back with: hermes-chat chat "
                  f"--session {run.session_id})\n"
                  f"    Enter  keep watching")
        self._say("  s, l or Enter? ", end="")
        try:
            line = await self.interrupts.guard(self.reader.read_line())
        except Interrupted:
            line = "l"  # Ctrl-C twice: out
        choice = line.strip().lower()
        if line == EOF or choice == "l":  # Ctrl-D, or `l`; an empty line is Enter
            raise Leave()
        if choice == "s":
            await self._stop_run(run.run_id)
        run.asked.clear()  # a question left unanswered is asked again

    async def _stop_run(self, run_id: str) -> bool:
        try:
            await self.client.stop(run_id)
        except ServiceDown:
            raise
        except ServiceError as error:  # e.g. it ended meanwhile
            self._say(f"  ! {error.message}")
            return False
        return True

    def _goodbye(self) -> None:
        if self.session_id is not None:
            self._say(f"  session {self.session_id}: come back with: hermes-chat chat "
                      f"--session {self.session_id}")

    def _say(self, text: str = "", end: str = "\n") -> None:
        print(text, end=end, file=self.out, flush=True)


IN_FLIGHT = ("QUEUED", "RUNNING")


def command_of(text: str) -> str | None:
    """The command a line is (`/word` alone or with words after it, or a quit word alone);
    None for a message (`//...` included, and a path such as `/etc/hosts is empty`)."""
    if text.lower() in QUIT_WORDS:
        return text.lower()
    word = text.split(maxsplit=1)[0]
    if word.startswith("/") and word[1:].isalpha():
        return word.lower()
    return None


def _timed(state: ThinkingState, seconds: float) -> ThinkingState:
    """The state with the run's own duration, as the service measured it (this terminal saw
    its events arrive, maybe all at once when it caught up)."""
    first = state.first_at or datetime.now(UTC)
    return replace(state, first_at=first, last_at=first + timedelta(seconds=seconds))


def _decision(typed: str, choices: tuple[str, ...]) -> str:
    if typed.isdigit() and 1 <= int(typed) <= len(choices):
        return choices[int(typed) - 1]
    return typed if typed in choices else "deny"  # silence (or a typo) is not consent


def _history_line(message: Json) -> str:
    text = _trimmed(message["content"])
    if message["role"] == "USER":
        return f"{PROMPT}{text}"
    if message["role"] == "SYSTEM":
        return "  ── earlier turns summarized ──"
    if message["status"] == "SUCCESS":
        return f"hermes> {text}"
    if message["status"] in IN_FLIGHT:
        return "  (a run is going: following it)"
    return f"  ({message['status'].lower()}: {_trimmed(message['error'] or '')})"


def _trimmed(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= HISTORY_CHARS else text[:HISTORY_CHARS - 1] + "…"


async def print_sessions(client: ServiceClient, out: TextIO) -> None:
    """The newest conversations, one line each."""
    rows = await client.sessions()
    if not rows:
        print("  no conversations yet", file=out, flush=True)
    for row in rows:
        where = ", ".join(b["platform"] for b in row["bindings"]) or "terminal/API"
        busy = " · a run is going" if row["hasActiveRun"] else ""
        title = row["title"] or "(untitled)"
        print(f"  {row['id']:>5}  {title}  ({where}, {row['lastMessageAt'][:16]}{busy})",
              file=out, flush=True)
    print("  take one up with: hermes-chat chat --session N", file=out, flush=True)


def quiet_logs(level: str) -> None:
    """No log line inside the conversation: only errors, unless LOG_LEVEL=DEBUG asks for all
    (everything the person needs to know, the chat prints itself)."""
    if level.upper() != "DEBUG":
        logging.disable(logging.WARNING)


@dataclass(frozen=True)
class ChatOptions:
    """What `hermes-chat chat` was asked for."""

    url: str
    token: str | None
    session_id: int | None = None
    last: bool = False
    listing: bool = False


async def run_chat(options: ChatOptions, out: TextIO = sys.stdout, fd: int = 0) -> int:
    """Find the service, pick the session, converse; the exit code."""
    async with ServiceClient.connect(options.url, options.token) as client:
        try:
            return await _chat(client, options, out, fd)
        except ServiceDown as error:
            print(f"hermes-chat: {error.message}", file=sys.stderr, flush=True)
            return EXIT_SERVICE_DOWN
        except ServiceError as error:
            print(f"hermes-chat: {error.message}", file=sys.stderr, flush=True)
            return 1


async def _chat(client: ServiceClient, options: ChatOptions, out: TextIO, fd: int) -> int:
    health = await client.health()
    await client.sessions(limit=1)  # a token the service refuses is said now, not mid-sentence
    if options.listing:
        await print_sessions(client, out)
        return 0
    session_id = await _session(client, options)
    if session_id == EXIT_NO_SESSION_ID:
        print(f"hermes-chat: no session {options.session_id}: list them with "
              "`hermes-chat chat --list` (or /sessions in the chat)", file=sys.stderr, flush=True)
        return EXIT_NO_SESSION
    print(f"hermes-chat on {client.url}"
          f"{f', session {session_id}' if session_id else ''}: /help for commands, "
          "Ctrl-D to quit", file=out, flush=True)
    if health.get("bridge") != "ok":
        print(f"  ! the agent service (Hermes Bridge) does not answer ({health.get('bridge')})",
              file=out, flush=True)
    interrupts = Interrupts()
    with interrupts.installed():
        return await Conversation(client, LineReader(fd), interrupts, out, session_id).run()


EXIT_NO_SESSION_ID = -1


async def _session(client: ServiceClient, options: ChatOptions) -> int | None:
    """The session to take up: --session N (EXIT_NO_SESSION_ID if there is none), --last (the
    newest one no Slack or Discord thread is bound to), or None (a new one, once you write)."""
    if options.session_id is not None:
        try:
            return int((await client.session(options.session_id))["id"])
        except ServiceError as error:
            if error.code == "not_found":
                return EXIT_NO_SESSION_ID
            raise
    if options.last:
        rows = await client.sessions(limit=50)
        return next((int(r["id"]) for r in rows if not r["bindings"]), None)
    return None
