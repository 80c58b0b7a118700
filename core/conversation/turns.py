"""What a person's message, edit or click does to the turns of a conversation: the one front
door of the adapters, the admin API and the terminal chat (through the API).

- `take`: a message in a session found for it: its words and files read, what the thread is
  told first (`say`), the thread's earlier messages as context, the turn written; one outcome
  (`Taken`: the run, or the busy run in the way). `take_edit`: the same for an edited message.
  An adapter that shows a sign of the turn before it is written (a Stop button on a
  placeholder) names its run first (`new_run_id`, given in the `Arrival`).
- `start`: an operator's run (the admin API, and the terminal chat through it), at the end of
  the active branch or as a new version of a turn (`parent_message_id`).
- `regenerate`, `stop` (with who shows the end of a stopped run), `switch_version`,
  `edit_message`.

Every busy check is the database's (a run in flight on any replica counts), and every tree
change happens after it, inside the same transaction that holds the session's row lock
(`core.runtime.records.locked_session`): a refused edit or switch changes nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from core.chat import channel_settings, sessions, tree
from core.chat.policy import Policy
from core.chat.attachments import FileOffer, FileReader
from core.chat.sessions import ThreadKey
from core.chat.thread_context import to_stored
from core.conversation import written
from core.conversation.session_commands import check_choices
from core.conversation.views import run_message, stored_update
from core.errors import Busy, Conflict, NotFound, NotYours
from core.text.field_errors import InvalidField
from core.agent.bridge.types import STEER_CHARS
from core.runtime import records
from core.runtime.pool import RunPool
from core.runtime.pool import new_run_id as new_run_id  # an adapter shows a run before it starts
from core.runtime.updates import RunUpdate
from core.store.db import first_value
from core.usage.spenders import Spender, spender_at
from core.runtime.clarify import ClarifyOutcome
from core.store.models import (
    IN_FLIGHT,
    BusyMessage,
    ChatMessage,
    ChatSession,
    ClarifyPause,
    MessageStatus,
    PauseKind,
    Role,
    utc_now,
)

log = logging.getLogger(__name__)
STOPPED = "Stopped."


@dataclass(frozen=True, slots=True)
class Arrival:
    """A person's message as an adapter read it off its platform, in the session found for it
    (`new`: made for this message, the bot's first mention in a thread)."""

    session: ChatSession
    new: bool
    text: str
    author: str
    platform_message_id: str
    offers: Sequence[FileOffer] = ()
    thread: written.Reader | None = None  # the thread's earlier messages
    replied: written.Reader | None = None  # the messages it replies to
    platform_refs: dict[str, Any] | None = None  # where its turn shows (Slack)
    place: ThreadKey | None = None  # the thread it was written in
    run_id: str | None = None  # the run's id if shown before it is written (`new_run_id`)
    policy: Policy | None = None  # the service's who may talk (the channel's replaces it)
    roles: tuple[str, ...] = ()  # the author's Discord roles
    busy_mode: str | None = None  # what the person chose for a busy thread (a button)


@dataclass(frozen=True, slots=True)
class Taken:
    """What a message or an edit did: started `run` (`queued`: its place in the thread's line,
    behind the run in flight), gave the run in flight guidance (`steered`, its run `running`),
    or was refused (`busy`, with the run in flight in the way: `running`; `not_allowed`: its
    channel's settings do not let its author talk); none of these when it was taken already
    (a retry, a replay, another replica) or had nothing to answer."""

    run: RunUpdate | None = None
    busy: Busy | None = None
    running: str | None = None
    queued: int | None = None
    steered: bool = False
    not_allowed: bool = False
    parked: int | None = None  # a busy message kept for its author's choice (`choose`)


Say = Callable[[tuple[str, ...]], Awaitable[None]]  # what the thread is told before the answer


async def take(pool: RunPool, arrival: Arrival, files: FileReader, say: Say,
               context_messages: int) -> Taken:
    """The run that answers a person's message. Its files skipped (or that nothing in it could
    be read) are said first; a platform message taken already (a retry, a replay, another
    replica) starts nothing and reads no file again (a session made for this message has
    nothing in it to look for). RateLimited over the author's quota. The turn takes the
    session's model and skill as the adapter read them with the session, and the channel
    settings the session keeps: its thread context size (else `context_messages`), who may
    talk (`arrival.policy`, changed by them), what a message while its run works does
    (`busy_mode`: refused, queued behind it, or given to it as guidance)."""
    session, platform_id_ = arrival.session, arrival.platform_message_id
    session_id = session.id
    settings = channel_settings.of_session(session, pool.channel_defaults)
    if arrival.policy is not None and not arrival.policy.in_channel(settings.values).may_talk(
            arrival.author, arrival.roles):
        return Taken(not_allowed=True)
    if not arrival.new and await user_node(session_id, platform_id_) is not None:
        return Taken()
    said = await written.read(arrival.text, arrival.offers, files)
    if said.notices:
        await say(said.notices)
    if not said.text:
        return Taken()
    if settings.sources.get("thread_context") != "service":  # the channel's, over the setting
        context_messages = settings["thread_context"]
    context = await written.earlier(session_id, context_messages, new=arrival.new,
                                    thread=arrival.thread, replied=arrival.replied)
    refs: dict[str, Any] = {} if arrival.platform_refs is None else {
        "platform_refs": arrival.platform_refs}
    mode = arrival.busy_mode or settings["busy_mode"]
    try:
        run = await pool.start(session_id, said.text, author=arrival.author,
                               platform_message_id=platform_id_, files=said.files,
                               thread_context=to_stored(context), model_id=session.model_id,
                               skill_folder=session.skill_folder, run_id=arrival.run_id,
                               spender=_spender(arrival), queue=mode == QUEUE, **refs)
    except Busy as busy:
        if await user_node(session_id, platform_id_) is not None:
            return Taken()  # the same message, taken meanwhile (a retry racing it)
        if mode == STEER:
            taken = await _steer(pool, session_id, said.text, arrival, busy)
            return taken if taken.busy is None else await _parked(taken, arrival, said.text)
        return await _parked(await _refused(busy, session_id), arrival, said.text)
    return Taken(run=run, queued=await _place_in_line(run))


async def _parked(refused: Taken, arrival: Arrival, text: str) -> Taken:
    """A refused message kept (its words; its files are not) for the busy notice's choices:
    queue it, or give it to the run in the way as guidance."""
    if refused.running is None:
        return refused
    row = await BusyMessage.create(session_id=arrival.session.id, run_id=refused.running,
                                   author=arrival.author,
                                   platform_message_id=arrival.platform_message_id, text=text)
    return replace(refused, parked=row.id)


async def parked_session(parked_id: int) -> int | None:
    """The conversation of a busy message kept for its author's choice (None: handled)."""
    return await first_value(BusyMessage.filter(id=parked_id).values_list("session_id", flat=True))


async def choose(pool: RunPool, parked_id: int, choice: str, user: str, policy: Policy,
                 files: FileReader, platform_refs: dict[str, Any] | None = None) -> Taken:
    """The author of a refused message (or a chat admin) chose what it does after all, on the
    busy notice: `queue` (it runs after the run in flight) or `steer` (guidance for it). A run
    that ended meanwhile answers it at once; NotFound once it was chosen already."""
    if choice not in (QUEUE, STEER):
        raise InvalidField("choice", f"must be {QUEUE} or {STEER}")
    row = await BusyMessage.get_or_none(id=parked_id)
    if row is None:
        raise NotFound(CHOSEN)
    if user != row.author and not policy.is_admin(user):
        raise NotYours(row.author)
    if not await BusyMessage.filter(id=parked_id).delete():  # another click won
        raise NotFound(CHOSEN)
    session = await sessions.get_session(row.session_id)
    arrival = Arrival(session, False, row.text, row.author, row.platform_message_id,
                      platform_refs=platform_refs, busy_mode=choice)
    return await take(pool, arrival, files, _nothing_first, 0)


CHOSEN = "That message was already queued or given as guidance."


async def _nothing_first(notices: tuple[str, ...]) -> None:
    """A kept message has only words: nothing is said before its turn."""


QUEUE, STEER = "queue", "steer"


async def _place_in_line(run: RunUpdate) -> int | None:
    """A run queued behind its thread's run: how many are ahead of it (None: it runs now)."""
    if run.status != MessageStatus.QUEUED:
        return None
    return await records.queue_position(run.session_id, run.message_id) or None


async def _steer(pool: RunPool, session_id: int, text: str, arrival: Arrival,
                 busy: Busy) -> Taken:
    """The message as guidance for the run in flight, stored under its answer as a user
    message of kind `steer`; refused as busy when that run has not started on the Bridge yet
    or has ended meanwhile (the person then sends it again, or queues it)."""
    if len(text) > STEER_CHARS:
        raise InvalidField("text", f"is {len(text):,} characters: guidance to a running answer "
                                   f"is at most {STEER_CHARS:,}; send it once the answer is done")
    running = await run_in_flight(session_id)
    answer = await ChatMessage.get_or_none(run_id=running, role=Role.ASSISTANT) if running else None
    if answer is None or answer.status != MessageStatus.RUNNING:
        return await _refused(busy, session_id)
    node = await tree.add_steer(session_id, answer.id, text, author=arrival.author,
                                platform_message_id=arrival.platform_message_id)
    try:
        await pool.bridge.steer(answer.run_id or "", text)
    except (NotFound, Conflict):
        await ChatMessage.filter(id=node.id).delete()
        return await _refused(busy, session_id)
    except Exception:  # not given (the Bridge away): a row left would be given by a continuation
        await ChatMessage.filter(id=node.id).delete()
        raise
    return Taken(steered=True, running=running)


def _spender(arrival: Arrival) -> Spender | None:
    """Who a message's run counts against, known without a query when its session was made
    for it: the thread it came from is that session's only one."""
    place = arrival.place
    if not arrival.new or place is None:
        return None
    return spender_at(str(place.platform), place.workspace, place.channel, arrival.author)


async def take_edit(pool: RunPool, node: ChatMessage, text: str, *, author: str,
                    platform_message_id: str, **fields: Any) -> Taken:
    """A person edited a message taken as a turn: a new branch answering the new text (nothing
    when the text did not change: a link preview, not an edit), or the busy run in the way."""
    try:
        return Taken(run=await edit(pool, node, text, author=author,
                                    platform_message_id=platform_message_id, **fields))
    except Busy as busy:
        return await _refused(busy, node.session_id)


async def _refused(busy: Busy, session_id: int) -> Taken:
    """Refused while a run is in flight: with that run (whichever replica drives it)."""
    return Taken(busy=busy, running=await run_in_flight(session_id))


async def start(pool: RunPool, session_id: int, text: str, *, model_id: str | None = None,
                skill_folder: str | None = None, max_iterations: int | None = None,
                parent_message_id: int | None = None, exempt: bool = False) -> RunUpdate:
    """An operator's run in the session (None leaves the session's model, skill and limits);
    `exempt`: no spend limit refuses or stops it (ADMIN_UNLIMITED_TOKEN).

    `parent_message_id` says where the run's user message goes:
    - a USER message (a new version `edit_message` made): the run answers it as it is, so
      `text` must repeat its text;
    - the leaf of the active branch: the usual case, the same as leaving it out;
    - any other ASSISTANT message: the new user message hangs under it as a new version of the
      turn that follows it (that path becomes the active branch), after the same refusals a
      start makes (busy session, unknown model or skill), so a refused start writes nothing;
    - a SYSTEM summary: refused (name the message it follows).
    """
    await sessions.get_session(session_id)
    check_choices(pool.catalogue, model_id, skill_folder)
    chosen: dict[str, Any] = {k: v for k, v in (("model_id", model_id),
                                                ("skill_folder", skill_folder)) if v is not None}
    if exempt:
        chosen["spend_exempt"] = True
    user_message_id = await _user_message(session_id, text, parent_message_id)
    return await pool.start(session_id, text, user_message_id=user_message_id,
                            max_iterations=max_iterations, **chosen)


async def _user_message(session_id: int, text: str, parent_message_id: int | None) -> int | None:
    """The existing user message the run answers, if `parent_message_id` makes one."""
    if parent_message_id is None:
        return None
    parent = await _parent(session_id, parent_message_id)
    if parent.role == Role.USER:
        if parent.content != text:
            raise InvalidField("message", (
                f"differs from the text of user message {parent.id}, which this run would "
                "answer; edit it first (PATCH /api/chat/messages/{id}) or send the same text"
            ))
        return parent.id
    if parent.role == Role.SYSTEM:
        raise InvalidField("parent_message_id", (
            f"message {parent.id} is a summary; name the message it follows ({parent.parent_id})"
        ))
    leaf = await tree.leaf(session_id)
    if leaf is not None and leaf.id == parent.id:
        return None  # the end of the active branch: the pool appends there itself
    async with records.locked_session(session_id):  # the database's busy check, then the branch
        node = await tree.add_child(
            session_id, parent.id, Role.USER, MessageStatus.SENT, content=text
        )
    return node.id


async def _parent(session_id: int, message_id: int) -> ChatMessage:
    message = await ChatMessage.get_or_none(id=message_id)
    if message is None or message.session_id != session_id:
        raise InvalidField("parent_message_id", f"session {session_id} has no message {message_id}")
    return message


async def answer_question(pool: RunPool, run_id: str, clarify_id: str, answer: str,
                          answered_by: str) -> ClarifyOutcome:
    """An operator answers the run's clarify question (the buttons answer through
    `pool.answer`); a question already answered or expired is a Conflict."""
    await run_message(run_id)
    pause = await ClarifyPause.get_or_none(clarify_id=clarify_id, kind=PauseKind.CLARIFY)
    if pause is None or pause.run_id != run_id:
        raise InvalidField("clarify_id", f"run {run_id} asked no question {clarify_id}")
    outcome = await pool.answer(clarify_id, answer, answered_by)
    if not outcome.accepted:
        raise Conflict(outcome.reason or f"question {clarify_id} cannot be answered any more")
    return outcome


async def regenerate(pool: RunPool, message_id: int, **fields: Any) -> RunUpdate:
    """A new version of an assistant message (Regenerate, and Retry on a failed turn),
    generated by a new run; refused while a run is in flight, over a spend limit, or over the
    author's quota. `fields` go on the new answer (`author`, `spend_exempt`); it shows where
    its turn does."""
    return await pool.regenerate(message_id, **fields)


async def user_node(session_id: int, platform_message_id: str) -> ChatMessage | None:
    """The user node a platform message was taken as: its newest version (an edit adds a
    node with the same platform message id)."""
    return await ChatMessage.filter(
        session_id=session_id, platform_message_id=platform_message_id, role=Role.USER,
    ).order_by("-id").first()


async def author(message_id: int) -> str | None:
    """Who wrote a message (the platform's user id for a message from a platform)."""
    return await first_value(ChatMessage.filter(id=message_id).values_list("author", flat=True))


async def platform_id(message_id: int) -> str | None:
    """The platform's id of a message that came from a platform (a Slack ts)."""
    return await first_value(ChatMessage.filter(id=message_id).values_list("platform_message_id", flat=True)) or None


async def save_platform_id(message_id: int, platform_message_id: str) -> None:
    """A finished answer shows in the platform's message `platform_message_id` (its first)."""
    await ChatMessage.filter(id=message_id).update(platform_message_id=platform_message_id)


async def run_in_flight(session_id: int) -> str | None:
    """The run in flight (queued or running) in the session, on any replica."""
    return await records.busy_run(session_id)


async def edit(pool: RunPool, node: ChatMessage, text: str, *, author: str,
               platform_message_id: str, **fields: Any) -> RunUpdate | None:
    """A person edited a message the bot took as a turn: a new branch answering the new
    text (None when the text did not change: a link preview, not an edit)."""
    if text == node.content:
        return None
    return await pool.edit(node.id, text, author=author,
                           platform_message_id=platform_message_id, **fields)


async def edit_message(message_id: int, text: str) -> ChatMessage:
    """A new version of a user message, no run (the admin API's edit): refused while a run is
    in flight, as every other change of the tree."""
    message = await tree.get_message(message_id)
    async with records.locked_session(message.session_id):
        return await tree.edit(message_id, text, message.session_id)


async def switch_version(message_id: int, session_id: int | None = None) -> ChatMessage:
    """Make this version the active one (◀ ▶, the admin API's activate); refused while a
    run is in flight, since the running answer would land on a branch nobody sees."""
    message = await tree.get_message(message_id, session_id)
    async with records.locked_session(message.session_id):
        return await tree.activate(message.id, message.session_id)


@dataclass(frozen=True, slots=True)
class Stopped:
    """A stopped run's end; `show_end`: no run of this process will show it (it was driven
    elsewhere, or queued), so the caller that shows turns shows it."""

    update: RunUpdate
    show_end: bool


async def stop_shown(pool: RunPool, run_id: str) -> Stopped:
    """Stop a run from any replica (`stop`), saying who shows its end."""
    update = await stop(pool, run_id)
    return Stopped(update, pool.view(update.run_id) is None)


async def stop(pool: RunPool, run_id: str) -> RunUpdate:
    """Stop a run from any replica. This process's runs stop here; a run driven elsewhere
    is aborted through the shared Bridge, and its end recorded at once (its driver records
    the same when the Bridge's `aborted` reaches it). Conflict once it has ended."""
    try:
        return await pool.stop(run_id)
    except NotFound:
        pass
    message = await run_message(run_id)
    if message.status not in IN_FLIGHT:
        raise Conflict(f"run {run_id} has already ended: {message.status}")
    try:
        await pool.bridge.abort(run_id)
    except NotFound:  # queued elsewhere, or its driver is gone: the Bridge never ran it
        log.info("run %s is unknown to the Bridge; recording its stop", run_id)
    except Conflict:  # it finished on the Bridge just now: its driver records how
        raise Conflict(f"run {run_id} has already ended") from None
    await _record_stop(message.id)
    return await stored_update(message.id)


async def _record_stop(message_id: int) -> None:
    stopped = await ChatMessage.filter(id=message_id, status__in=IN_FLIGHT).update(
        status=MessageStatus.STOPPED, error=STOPPED, completed_at=utc_now())
    if stopped:
        await records.expire_questions(message_id)
