"""The `/hermes` commands, platform-neutral: each returns what happened, and the adapters
say it in their words and layout (Block Kit, embeds, ephemeral or not).

One rule each: `new` keeps the model and skill of the conversation it replaces; `reset` is
refused while a run is in flight (the database's check) and renews the agent in a
transaction; `model`/`skill` accept only what the catalogue has.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from core.agent.bridge.port import Bridge
from core.agent.bridge.types import Memory
from core.agent.catalogue import Catalogue, ModelEntry, Skill
from core.chat import sessions
from core.chat.export import prepare_export
from core.chat.sessions import ThreadKey
from core.conversation import channels, session_commands
from core.conversation.session_commands import ResetOutcome, SessionChanges
from core.runtime.pool import RunPool
from core.runtime.updates import RunUpdate
from core.store.models import ChatSession, LimitPeriod, LimitScope, MessageStatus
from core.usage import periods, reports, words
from core.usage.limits import Standing, amount_words
from core.usage.spenders import Spender
from core.agent.thinking import UsageTotals

AGENT_NOT_DROPPED = ("The agent service is unreachable right now, so the old agent could not be "
                     "cleared there yet; your next message starts a fresh agent all the same.")
NO_SKILL = "none"  # `/hermes skill none`: back to no skill
EXPORT_FORMATS = ("md", "json")
EXPORT_BRANCHES = ("active", "all")
COMMANDS = {  # name -> what it does (help texts and command descriptions)
    "new": "start a new conversation (it keeps this one's model and skill)",
    "reset": "give this conversation a fresh agent (its messages stay)",
    "model": "show or choose the model of this conversation",
    "skill": "show or choose the skill of this conversation",
    "export": "export this conversation as a file (Markdown or JSON; the active branch or all)",
    "memory": "show what the agent remembers",
    "status": "runs in flight, the queue, and this conversation's settings",
    "channel": "show this channel's settings; chat admins change them (`channel help`)",
    "usage": "what your messages have spent today and this month",
    "schedule": "run a prompt on a schedule in this channel, each time in a new thread "
                "(list, pause, resume, delete, history)",
    "help": "these commands",
}


async def new_conversation(key: ThreadKey, replaced: ChatSession | None) -> ChatSession:
    """A fresh session bound to the thread, with its channel's settings as they are now, and
    the model and skill of the one it replaces where those settings name none."""
    session = await sessions.create_in_channel(
        key, model_id=replaced.model_id if replaced else None,
        skill_folder=replaced.skill_folder if replaced else None)
    await sessions.bind_thread(session.id, key)
    return session


async def reset(bridge: Bridge, session_id: int) -> ResetOutcome:
    """A fresh agent for the conversation; its messages stay. Busy while a run is in flight
    (then nothing changed, the Bridge included)."""
    return await session_commands.reset_session(bridge, session_id)


def reset_caveat(outcome: ResetOutcome) -> str | None:
    """What the person who reset should know beyond "done": the Bridge could not be told to
    drop the old agent (its details are in the log)."""
    return None if outcome.bridge_reached else AGENT_NOT_DROPPED


async def choose_model(catalogue: Catalogue, session_id: int, model_id: str) -> ModelEntry:
    """The session's model from now on (NotFound-like InvalidField for an unknown one)."""
    await session_commands.update_session(catalogue, session_id, SessionChanges(model_id=model_id))
    return catalogue.model(model_id)


async def choose_skill(catalogue: Catalogue, session_id: int, folder: str) -> Skill | None:
    """The session's skill from now on; `none` means no skill (None)."""
    if folder == NO_SKILL:
        await session_commands.update_session(catalogue, session_id,
                                              SessionChanges(skill_folder=None))
        return None
    await session_commands.update_session(catalogue, session_id, SessionChanges(skill_folder=folder))
    return catalogue.skill(folder)


@dataclass(frozen=True, slots=True)
class ExportFile:
    filename: str
    content: bytes
    format: str
    branch: str


def export_options(argument: str | None) -> tuple[str, str]:
    """`[md|json] [active|all]` in any order; an unknown word is taken as the format (and
    refused by the export)."""
    format_, branch = "md", "active"
    for word in (argument or "").lower().split():
        if word in EXPORT_BRANCHES:
            branch = word
        else:
            format_ = word
    return format_, branch


async def export(session_id: int, format_: str = "md", branch: str = "active") -> ExportFile:
    """The conversation as one file (InvalidField for an unknown format or branch)."""
    prepared = await prepare_export(session_id, format_, branch)
    content = "".join([chunk async for chunk in prepared.chunks()]).encode()
    return ExportFile(prepared.filename, content, format_, branch)


async def memory(bridge: Bridge, session_id: int) -> Memory:
    """MEMORY.md and USER.md of the conversation's agent."""
    return await session_commands.session_memory(bridge, session_id)


@dataclass(frozen=True, slots=True)
class Status:
    """`/hermes status`: the runs of this process, and this conversation (None: none here)."""

    running: int
    queued: int
    session: ChatSession | None
    current: RunUpdate | None  # this conversation's run in flight, if this process has it
    settings: str | None = None  # the channel settings it keeps, in words (session_words)


def status(pool: RunPool, session: ChatSession | None) -> Status:
    """What `/hermes status` says."""
    active = pool.active()
    running = sum(1 for u in active if u.status == MessageStatus.RUNNING)
    queued = sum(1 for u in active if u.status == MessageStatus.QUEUED)
    current = next((u for u in active if session and u.session_id == session.id), None)
    settings = None if session is None else channels.session_words(
        channels.of_session(pool.channel_defaults, session))
    return Status(running, queued, session, current, settings)


@dataclass(frozen=True, slots=True)
class SpentIn:
    """What a person's runs spent in one period, and when the period resets."""

    label: str  # "Today", "This month"
    spent: UsageTotals
    resets_at: datetime


@dataclass(frozen=True, slots=True)
class OwnUsage:
    """`/hermes usage`: what a person's runs spent today and this month (UTC), and the spend
    limits that apply to them as a person ("1,000 tokens a day: 220 tokens used")."""

    periods: tuple[SpentIn, ...]
    now: datetime
    limits: tuple[str, ...] = ()

    def lines(self) -> list[tuple[str, str]]:
        """(label, words) per period, the same on every platform: "3 model calls · 330 tokens
        (300 in, 30 out) · $0.00084; resets at midnight UTC (in 3 h 05 min)"."""
        return [(p.label, f"{_spent_words(p.spent)}; resets "
                          f"{periods.reset_words(p.resets_at, self.now)}")
                for p in self.periods]


async def own_usage(pool: RunPool, user: str) -> OwnUsage:
    """What the runs `user` asked for (messages, edits, Regenerate) spent this UTC day and
    this UTC month, and their own limits."""
    now = pool.limits.clock()
    spent = []
    for label, period in (("Today", LimitPeriod.DAY), ("This month", LimitPeriod.MONTH)):
        window = periods.window(period, now)
        totals = await reports.spent_by(LimitScope.USER, user, window.first_day)
        spent.append(SpentIn(label, totals, window.resets_at))
    standing = await pool.limits.standing(Spender(user=user), now)
    return OwnUsage(tuple(spent), now, tuple(map(_limit_words, standing)))


def _limit_words(standing: Standing) -> str:
    unit = standing.unit
    return (f"{amount_words(standing.amount, unit)} a {standing.period}: "
            f"{amount_words(standing.used, unit)} used")


def _spent_words(spent: UsageTotals) -> str:
    if not spent.calls:
        return "nothing yet"
    return f"{spent.calls:,} model call{'s' if spent.calls != 1 else ''} · {words.spent(spent)}"
