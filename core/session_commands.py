"""What an operator does to a session: create and change it with catalogue checks, reset it,
read its agent memory. Changes are validated in full before anything is written."""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from core import sessions
from core.bridge.port import Bridge
from core.bridge.types import Memory
from core.catalogue import Catalogue
from core.errors import Busy, HermesChatError, NotFound
from core.field_errors import InvalidField, check_text
from core.models import ChatMessage, ChatSession, SessionStatus, utc_now
from core.outage import transaction
from core.runtime.records import locked_session
from core.session_queries import has_active_run

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
    session: ChatSession
    agent_dropped: bool
    kept_history: bool


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
    """Seed 000 §4.3.5: drop the agent on the Bridge and give the session a new Bridge session.

    With `keep_history` false the conversation also starts afresh: the root of the active branch
    becomes an inactive version, so the next message starts a new root beside it and the old
    conversation stays whole, one version switch away (nothing is deleted).
    """
    session = await sessions.get_session(session_id)
    if await has_active_run(session_id):
        raise Busy(f"session {session_id} has a run in flight; stop it before resetting")
    dropped = await bridge.reset_session(session.hermes_session)
    async with locked_session(session_id):  # a run that started meanwhile: Busy, nothing renewed
        renewed = await sessions.renew_hermes_session(session_id)
        if not keep_history:
            await ChatMessage.filter(session_id=session_id, parent_id__isnull=True).update(
                is_active=False
            )
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
