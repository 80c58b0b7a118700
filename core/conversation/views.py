"""What a conversation shows of a stored turn: the turn as a RunUpdate (after a version
switch, a restart, or a run another replica drives), where it stands among its versions, the
thinking "Show thinking" opens, the summary behind a compaction's divider; a stored message and
a clarify question as they stand; the state of a run and its events, live where this process
drives it, else the database's (the admin API's run routes)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace

from core.agent.events import Event
from core.agent.thinking import ThinkingState, ToolCall, replay
from core.chat import tree
from core.chat.message_views import MessageView, log_record, message_views
from core.errors import NotFound
from core.runtime import clarify
from core.runtime.follow import follow_events
from core.runtime.pool import RunPool
from core.runtime.updates import PauseView, RunUpdate
from core.store.models import (
    ChatMessage,
    ChatMessageLog,
    ClarifyPause,
    MessageStatus,
    PauseKind,
    PauseStatus,
    Role,
)

PLACE_SECONDS = 1.0  # a queued run learns its place in the same turn of the loop; a safety bound


async def stored_message(message_id: int) -> ChatMessage:
    """A stored message (a turn's question or answer, a compaction's summary); NotFound when
    there is none."""
    return await tree.get_message(message_id)


async def stored_update(message_id: int) -> RunUpdate:
    """The assistant message as a RunUpdate, its thinking replayed from its log. A finished
    answer shows the message's content: it is the answer of record (what the export and the
    admin API show), whatever the log's last event said."""
    message = await tree.get_message(message_id)
    rows = await ChatMessageLog.filter(message_id=message_id).order_by("seq")
    return _stored(message, replay(log_record(row) for row in rows))


def update_of(shown: MessageView) -> RunUpdate:
    """An assistant message read with its logs (`browsing.message_page`) as `stored_update`
    gives it, without another query."""
    return _stored(shown.message, shown.thinking or ThinkingState())


def _stored(message: ChatMessage, state: ThinkingState) -> RunUpdate:
    status = MessageStatus(message.status)
    if status == MessageStatus.SUCCESS:
        state = replace(state, final_text=message.content)
    return RunUpdate(
        run_id=message.run_id or "", session_id=message.session_id,
        user_message_id=message.parent_id or 0, message_id=message.id, status=status,
        state=state, error=message.error, model_id=message.model_id,
        skill_folder=message.skill_folder,
    )


async def summary(message_id: int) -> str:
    """The summary behind a compaction's divider (a SYSTEM message's text)."""
    return (await tree.get_message(message_id)).content


async def current_update(pool: RunPool, message_id: int) -> RunUpdate:
    """The live view while this process drives the message's run, else the stored one."""
    message = await tree.get_message(message_id)
    live = pool.view(message.run_id) if message.run_id else None
    return live if live is not None else await stored_update(message_id)


async def thinking_of(pool: RunPool, message_id: int) -> ThinkingState:
    """What "Show thinking" pages through: the run's thinking and tools, live or stored."""
    return (await current_update(pool, message_id)).state


NOTHING_RECORDED = "Nothing was recorded for this answer."


@dataclass(frozen=True, slots=True)
class ThinkingSection:
    """One section of Show thinking: the thinking stream (`text`), or the tool calls."""

    title: str
    text: str = ""
    tools: tuple[ToolCall, ...] = ()


def thinking_sections(state: ThinkingState) -> list[ThinkingSection]:
    """What Show thinking shows, in order: every tool call with its arguments and result (the
    short summary of what was done), then the whole thinking stream. Empty when nothing was
    recorded (say NOTHING_RECORDED)."""
    sections = []
    if state.tools:
        sections.append(ThinkingSection("Tools", tools=state.tools))
    thinking = str(state.thinking).strip()
    if thinking:
        sections.append(ThinkingSection("Thinking", text=thinking))
    return sections


@dataclass(frozen=True, slots=True)
class Versions:
    """Where an answer stands among its sibling versions: "◀ position/total ▶" (1-based);
    the arrows show `previous_id` and `next_id` (None at an end)."""

    position: int = 1
    total: int = 1
    previous_id: int | None = None
    next_id: int | None = None


def versions_of(message_id: int, sibling_ids: list[int]) -> Versions:
    """The switcher of `message_id` among its siblings in branch order."""
    if message_id not in sibling_ids:
        return Versions()
    index = sibling_ids.index(message_id)
    previous = sibling_ids[index - 1] if index > 0 else None
    following = sibling_ids[index + 1] if index + 1 < len(sibling_ids) else None
    return Versions(index + 1, len(sibling_ids), previous, following)


async def versions(message_id: int) -> Versions:
    """The switcher of a stored message."""
    return versions_of(message_id, [m.id for m in await tree.versions(message_id)])


async def versions_along(session_id: int, messages: Sequence[ChatMessage]) -> dict[int, Versions]:
    """The switcher of each of these messages of a session (a page of its branch), in a query
    or two; summaries have none."""
    siblings = await tree.sibling_ids(session_id, messages)
    return {message_id: versions_of(message_id, ids) for message_id, ids in siblings.items()}


# --- a run ---------------------------------------------------------------------------------


async def run_message(run_id: str) -> ChatMessage:
    """The assistant message a run writes; NotFound for a run nobody started."""
    message = await ChatMessage.filter(run_id=run_id, role=Role.ASSISTANT).first()
    if message is None:
        raise NotFound(f"no run {run_id}")
    return message


@dataclass(frozen=True, slots=True)
class RunState:
    """Where a run is; `pause` is the question it waits on (None once answered)."""

    run_id: str
    session_id: int
    user_message_id: int | None
    message_id: int
    status: MessageStatus
    position: int | None
    pause: PauseView | None
    error: str | None
    thinking: ThinkingState


async def run_state(pool: RunPool, run_id: str) -> RunState:
    """The live view of a run driven here; otherwise its message, log replay and open question."""
    update = pool.view(run_id)
    if update is not None:
        return live_state(update)
    message = await run_message(run_id)
    [replayed] = await message_views([message.id])
    pause = await ClarifyPause.filter(run_id=run_id, kind=PauseKind.CLARIFY,  # not approvals
                                      status=PauseStatus.UNANSWERED).order_by("-id").first()
    return RunState(
        run_id=run_id, session_id=message.session_id, user_message_id=message.parent_id,
        message_id=message.id, status=message.status, position=None,
        pause=clarify.view(pause) if pause is not None else None, error=message.error,
        thinking=replayed.thinking or ThinkingState(),
    )


def live_state(update: RunUpdate) -> RunState:
    """A pool update as a state: only an unanswered question is pending."""
    pending = update.pause if update.pause and update.pause.status == PauseStatus.UNANSWERED else None
    return RunState(
        run_id=update.run_id, session_id=update.session_id,
        user_message_id=update.user_message_id, message_id=update.message_id,
        status=update.status, position=update.position, pause=pending, error=update.error,
        thinking=update.state,
    )


async def placed(pool: RunPool, update: RunUpdate) -> RunUpdate:
    """The update once a queued run knows its place (the runner queues it as soon as it runs)."""
    if update.status != MessageStatus.QUEUED or update.position is not None:
        return update
    subscription = pool.subscribe(update.run_id)
    try:
        async with asyncio.timeout(PLACE_SECONDS):
            while True:
                for latest in await subscription.next():
                    if latest.position is not None or latest.status != MessageStatus.QUEUED:
                        return latest
    except TimeoutError:
        return pool.view(update.run_id) or update
    finally:
        pool.unsubscribe(subscription)


async def run_events(pool: RunPool, run_id: str, after: int) -> AsyncIterator[Event]:
    """The run's events after seq `after`, live then stored; NotFound at once (before any
    event) for a run nobody started."""
    await run_message(run_id)
    return follow_events(pool, run_id, after)
