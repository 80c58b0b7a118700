"""The Bridge request of a run: its history, its model, its skill's and its channel's system
prompt, and the toolsets and approval policy of the channel it started in."""

from __future__ import annotations

from core.agent.bridge.types import ModelRef, RunRequest
from core.agent.catalogue import Catalogue, skill_system_prompt
from core.runtime.approvals import approved_patterns
from core.runtime.history import (
    HISTORY_ATTACHMENT_BYTES,
    NO_FILES,
    conversation_before,
    files_within,
    user_content,
)
from core.runtime.live import LiveRun


async def build_request(
    live: LiveRun, catalogue: Catalogue, max_iterations: int | None = None,
    file_budget: int = HISTORY_ATTACHMENT_BYTES,
) -> RunRequest:
    """The request of `live`, with the history of its branch as it stands now: the earlier
    files within `file_budget` bytes (HISTORY_ATTACHMENT_BYTES), the turn's own files all
    (ATTACHMENT_MAX_BYTES and ATTACHMENTS_PER_MESSAGE bound them at intake)."""
    assistant = live.turn.assistant
    channel = live.turn.session.channel_settings or {}
    history = await conversation_before(live.turn.user, file_budget)
    live.history_ids = tuple(ident for ident, _ in history)
    user = live.turn.user
    own = (await files_within([user.id], None)).get(user.id, NO_FILES)
    content = user_content(user, own)
    return RunRequest(
        run_id=live.run_id,
        session_id=live.turn.session.hermes_session,
        user_message=user.content,
        user_content=None if isinstance(content, str) else content,
        system_prompt=_system_prompt(catalogue, assistant.skill_folder,
                                     channel.get("system_prompt")),
        model=_model(catalogue, assistant.model_id),
        max_iterations=max_iterations,
        history=tuple(entry for _, entry in history),
        approved_patterns=await approved_patterns(live.turn.session.id),
        toolsets=tuple(channel["toolsets"]) if channel.get("toolsets") is not None else None,
        approvals="deny" if channel.get("approvals") == "deny" else "ask",
    )


def _system_prompt(catalogue: Catalogue, skill_folder: str | None,
                   channel_prompt: str | None) -> str | None:
    """The channel's system prompt (its settings), then the skill's."""
    skill = skill_system_prompt(catalogue.skill(skill_folder)) if skill_folder else None
    return "\n\n".join(p for p in (channel_prompt, skill) if p) or None


def _model(catalogue: Catalogue, model_id: str | None) -> ModelRef | None:
    entry = catalogue.model(model_id) if model_id else catalogue.default_model()
    if entry is None:
        return None
    return ModelRef(name=entry.model, base_url=entry.base_url, api_key_env=entry.api_key_env)
