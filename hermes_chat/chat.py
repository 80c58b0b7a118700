"""`hermes-chat chat`: talk to the agent in a terminal through the same core as the bots.

Each line you type is a turn; the run's thinking areas print as they change (status, tools,
todos) and clarify questions are answered at a prompt. Ctrl-D or /quit ends it.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from datetime import timedelta
from typing import TextIO

from core import db, presenting, sessions
from core.bridge.fleet import BridgeFleet
from core.catalogue import load_catalogue
from core.config import Settings
from core.conversation.policy import Policy
from core.errors import HermesChatError
from core.models import PauseKind
from core.presenting import APPROVAL_LABELS, approval_outcome, approval_question
from core.runtime.leases import Leases
from core.runtime.pool import RunPool
from core.runtime.recovery import recover
from core.runtime.updates import PauseView, RunUpdate
from core.urls import redacted_url

Reader = Callable[[], "asyncio.Future[str]"]
PROMPT = "you> "
TERMINAL = "terminal"  # the author of this terminal's messages
# Whoever runs `chat` on the machine holds the Bridge and the database: the admin of its turns.
TERMINAL_POLICY = Policy.of(admins=[TERMINAL])
# hermes-agent relays each reply of the model as progress of this pseudo-tool; the last one is
# the answer itself, which `hermes>` prints.
MODEL_TEXT = "_thinking"


class TerminalView:
    """Prints what changed between two updates of a run, never the same line twice, and not
    the model's last words as a status before they are printed as the answer."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.status = ""
        self.held: str | None = None  # the model's words, printed once the run goes on
        self.tools = 0
        self.todos: tuple = ()

    def show(self, update: RunUpdate) -> None:
        state = update.state
        line = presenting.status_line(update)
        if line != self.status and not update.finished:
            self._release()
            if _shows_model_text(update, line):
                self.held = f"  · {line}"
            else:
                self._print(f"  · {line}")
            self.status = line
        for tool in state.tools[self.tools:]:
            self._print(f"  🔧 {tool.name} {tool.args_preview[:60]}")
        self.tools = len(state.tools)
        if state.todos != self.todos:
            self.todos = state.todos
            for todo_line in presenting.todo_lines(state.todos):
                self._print(f"    {todo_line}")

    def finish(self, update: RunUpdate) -> None:
        if update.state.final_text is not None:
            self._print(f"\nhermes> {update.state.final_text}\n")
        else:
            self._release()  # it was no answer: what the model said last is worth seeing
        self._print(f"  ({presenting.closing_line(update)})")

    def _release(self) -> None:
        if self.held is not None:
            self._print(self.held)
            self.held = None

    def _print(self, text: str) -> None:
        print(text, file=self.out, flush=True)


def _shows_model_text(update: RunUpdate, line: str) -> bool:
    status = update.state.status
    return status is not None and status.tool_name == MODEL_TEXT and line.endswith(status.text)


async def converse(pool: RunPool, session_id: int, read: Reader, out: TextIO) -> None:
    """The loop: read a line, run it, show it live, answer its questions."""
    while True:
        print(PROMPT, end="", file=out, flush=True)
        line = await read()
        text = line.strip()
        if not line or text in ("/quit", "/exit"):  # "" is the end of input (Ctrl-D)
            print(file=out, flush=True)
            return
        if not text:
            continue
        try:
            started = await pool.start(session_id, text, author=TERMINAL)
        except HermesChatError as error:
            print(f"  ! {error.message}", file=out, flush=True)
            continue
        await _follow(pool, started.run_id, read, TerminalView(out), out)


async def _follow(pool: RunPool, run_id: str, read: Reader, view: TerminalView, out: TextIO) -> None:
    asked: set[str] = set()
    async for update in pool.subscribe(run_id):
        view.show(update)
        for pause in (update.pause, update.approval):
            if pause is not None and pause.status == "UNANSWERED" and pause.clarify_id not in asked:
                asked.add(pause.clarify_id)
                ask = _approve if pause.kind == PauseKind.APPROVAL else _ask
                await ask(pool, pause, read, out)
        if update.finished:
            view.finish(update)


async def _approve(pool: RunPool, pause: PauseView, read: Reader, out: TextIO) -> None:
    """A tool approval: anything but a number or name of an offered decision is Deny."""
    print(f"\n  {approval_question(pause)}:\n    {pause.question}", file=out)
    for number, decision in enumerate(pause.choices, start=1):
        print(f"    {number}. {APPROVAL_LABELS.get(decision, decision)}", file=out)
    print("  your decision (a number): ", end="", file=out, flush=True)
    picked = _decision((await read()).strip().lower(), pause.choices)
    outcome = await pool.decide(pause.clarify_id, picked, TERMINAL, TERMINAL_POLICY)
    print(f"  {approval_outcome(outcome.pause) or outcome.reason}", file=out, flush=True)


async def _ask(pool: RunPool, pause, read: Reader, out: TextIO) -> None:
    print(f"\n  ? {pause.question}", file=out)
    for number, choice in enumerate(pause.choices, start=1):
        print(f"    {number}. {choice}", file=out)
    print("  your answer (a number, or your own words): ", end="", file=out, flush=True)
    answer = (await read()).strip()
    if answer.isdigit() and 1 <= int(answer) <= len(pause.choices):
        answer = pause.choices[int(answer) - 1]
    outcome = await pool.answer(pause.clarify_id, answer or "(no answer)", TERMINAL)
    if not outcome.accepted:
        print(f"  ! {outcome.reason}", file=out, flush=True)


def _decision(typed: str, choices: tuple[str, ...]) -> str:
    if typed.isdigit() and 1 <= int(typed) <= len(choices):
        return choices[int(typed) - 1]
    return typed if typed in choices else "deny"  # silence (or a typo) is not consent


def stdin_reader() -> Reader:
    """Lines of standard input, read off the event loop ("" at end of input)."""
    return lambda: asyncio.ensure_future(asyncio.to_thread(sys.stdin.readline))


async def run_chat(settings: Settings, session_id: int | None) -> None:
    """Open the database and the Bridge client, pick the session, and converse."""
    await db.migrate(settings.database_url)
    await db.open_database(settings.database_url)
    catalogue = load_catalogue(settings.models_file, settings.skills_dir)
    async with BridgeFleet.over_http(settings.bridge_urls, token=settings.bridge_token) as bridge:
        leases = Leases(ttl=timedelta(seconds=settings.run_lease_seconds))
        pool = RunPool(bridge, catalogue, max_active_runs=settings.max_active_runs, leases=leases,
                       patience=settings.database_patience,
                       history_attachment_bytes=settings.history_attachment_bytes)
        await pool.open()
        try:
            await recover(pool)
            session = await (sessions.get_session(session_id) if session_id
                             else sessions.create_session())
            print(f"hermes-chat: session {session.id} ({redacted_url(settings.bridge_url)}); Ctrl-D to quit",
                  flush=True)
            await converse(pool, session.id, stdin_reader(), sys.stdout)
        finally:
            await pool.close()
            await db.close_database()
