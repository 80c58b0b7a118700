"""What an operator does to a session: create and change it with catalogue checks, reset it,
read its agent memory. Changes are validated in full before anything is written."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import msgspec

from core.agent.bridge.port import Bridge
from core.agent.bridge.types import Memory
from core.agent.catalogue import Catalogue
from core.chat import sessions, tree
from core.chat.session_queries import has_active_run
from core.errors import Busy, HermesChatError, NotFound
from core.runtime.records import locked_session
from core.store.models import ChatSession, SessionStatus, utc_now
from core.store.outage import transaction
from core.text.field_errors import InvalidField, check_text

log = logging.getLogger(__name__)
Unset = msgspec.UnsetType
UNSET = msgspec.UNSET


@dataclass(frozen=True, slots=True)
class SessionChanges:
    """A partial update: UNSET leaves a field as it is; None model/skill means the default."""

    title: str | Unset = UNSET
    model_id: str | None | Unset = UNSET
    skill_folder: str | None | Unset = UNSET
    status: SessionStatus | Unset = UNSET


@dataclass(frozen=True, slots=True)
class ResetOutcome:
    """A reset that happened: the session already has its new Bridge session. `bridge_reached`
    is False when the Bridge could not be told to drop the old agent (the details are logged):
    the next run starts a fresh agent all the same, under the new id."""

    session: ChatSession
    agent_dropped: bool
    kept_history: bool
    bridge_reached: bool = True


def check_choices(
    catalogue: Catalogue, model_id: str | None | Unset, skill_folder: str | None | Unset
) -> None:
    """InvalidField naming `model_id` / `skill_folder` if the catalogue has no such entry."""
    try:
        if isinstance(model_id, str):
            catalogue.model(check_text("model_id", model_id))
    except HermesChatError as error:
        raise InvalidField("model_id", error.message) from None
    try:
        if isinstance(skill_folder, str):
            catalogue.skill(check_text("skill_folder", skill_folder))
    except HermesChatError as error:
        raise InvalidField("skill_folder", error.message) from None


async def create_session(
    catalogue: Catalogue, *, title: str | None = None, model_id: str | None = None,
    skill_folder: str | None = None,
) -> ChatSession:
    """A new session, once its model and skill are known to the catalogue."""
    check_choices(catalogue, model_id, skill_folder)
    if title is not None:
        check_text("title", title)
    return await sessions.create_session(title=title, model_id=model_id, skill_folder=skill_folder)


async def update_session(
    catalogue: Catalogue, session_id: int, changes: SessionChanges
) -> ChatSession:
    """Apply a partial update in one transaction, after checking every changed field."""
    check_choices(catalogue, changes.model_id, changes.skill_folder)
    values = {
        name: value
        for name, value in (
            ("model_id", changes.model_id), ("skill_folder", changes.skill_folder),
            ("status", changes.status),
        )
        if value is not UNSET
    }
    async with transaction():
        if not isinstance(changes.title, Unset):
            await sessions.rename_session(session_id, check_text("title", changes.title))
        if values:
            updated = await ChatSession.filter(id=session_id).update(**values, updated_at=utc_now())
            if not updated:
                await sessions.get_session(session_id)  # raises NotFound
    return await sessions.get_session(session_id)


async def reset_session(bridge: Bridge, session_id: int, keep_history: bool = True) -> ResetOutcome:
    """Seed 000 §4.3.5: give the session a new Bridge session, then drop the old agent.

    Lock, check, commit, then the Bridge: a reset refused as busy has touched nothing, and a
    run that starts after the commit already runs under the new id. The Bridge call only frees
    the old agent, so its failure is logged and reported (`bridge_reached`), not raised.

    With `keep_history` false the conversation also starts afresh: the root of the active branch
    becomes an inactive version, so the next message starts a new root beside it and the old
    conversation stays whole, one version switch away (nothing is deleted).
    """
    async with locked_session(session_id) as session:  # Busy while a run is in flight
        old_agent = session.hermes_session
        renewed = await sessions.renew_hermes_session(session_id)
        if not keep_history:
            await tree.set_aside(session_id)
    try:
        dropped = await bridge.reset_session(old_agent)
    except HermesChatError as error:
        log.warning("reset of session %s: the Bridge was not told to drop agent %s: %s",
                    session_id, old_agent, error.message)
        return ResetOutcome(renewed, False, keep_history, bridge_reached=False)
    return ResetOutcome(renewed, dropped, keep_history)


async def delete_session(session_id: int) -> None:
    """Delete the session with everything in it; refused while a run still writes to it (its
    log rows and answer would have nowhere to go)."""
    async with transaction():
        # The row lock orders this against a run's start, which locks the session row too.
        if await ChatSession.select_for_update().get_or_none(id=session_id) is None:
            raise NotFound(f"no chat session {session_id}")
        if await has_active_run(session_id):
            raise Busy(f"session {session_id} has a run in flight; stop it before deleting")
        await sessions.delete_session(session_id)


async def session_memory(bridge: Bridge, session_id: int) -> Memory:
    """MEMORY.md and USER.md of the session's current Bridge session."""
    session = await sessions.get_session(session_id)
    return await bridge.get_memory(session.hermes_session)


async def set_session_memory(bridge: Bridge, session_id: int, *, memory: str | None = None,
                             user: str | None = None) -> Memory:
    """Replace MEMORY.md and/or USER.md (None leaves one as it is) of the session's current
    Bridge session: what its agent remembers from its next run on."""
    session = await sessions.get_session(session_id)
    for name, text in (("memory", memory), ("user", user)):
        if text is not None:
            check_text(name, text)
    return await bridge.set_memory(session.hermes_session, memory=memory, user=user)
