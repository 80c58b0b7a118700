"""Builds hermes-agent's AIAgent for one chat session and one model."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import hermes_state
import run_agent

from bridge.errors import InvalidRequest, KeyNotAllowed, ToolsetNotAllowed
from bridge.memory_scopes import MemoryScopes
from bridge.settings import BridgeSettings
from bridge.wire import ModelSpec

logger = logging.getLogger(__name__)
NO_KEY = "no-key-required"  # AIAgent insists on a key; local servers ignore it


@dataclass(frozen=True)
class ModelChoice:
    """The model an agent talks to and the toolsets it has (None: BRIDGE_TOOLSETS); a
    session's agent is rebuilt when this changes."""

    name: str
    base_url: str
    api_key: str
    toolsets: tuple[str, ...] | None = None


def choose_toolsets(requested: list[str] | None,
                    settings: BridgeSettings) -> tuple[str, ...] | None:
    """The run's toolsets: those asked for (its channel's; an empty list: no tools), each one
    the Bridge enables (BRIDGE_TOOLSETS), else ToolsetNotAllowed; None: the Bridge's own."""
    if requested is None:
        return None
    refused = [name for name in requested if name not in settings.toolsets]
    if refused:
        raise ToolsetNotAllowed(f"toolsets {', '.join(refused)} are not enabled on this Bridge "
                                f"(BRIDGE_TOOLSETS: {', '.join(settings.toolsets)})")
    return tuple(dict.fromkeys(requested))


def choose_model(spec: ModelSpec | None, settings: BridgeSettings,
                 secrets: Mapping[str, str]) -> ModelChoice:
    """The run's model, defaulting to the settings; keys come from the Bridge's environment,
    and only from the variables BRIDGE_KEY_ENVS lists (else any caller could have the agent
    send, say, DISCORD_TOKEN to an endpoint of its choice)."""
    name = spec.name if spec else settings.model
    base_url = (spec.base_url if spec else None) or settings.openai_base_url
    if not name or not base_url:
        raise InvalidRequest("no model: send model.name/base_url or set HERMES_MODEL and "
                             "OPENAI_BASE_URL on the Bridge")
    if spec and spec.api_key_env:
        if spec.api_key_env not in settings.key_envs:
            allowed = ", ".join(settings.key_envs) or "none"
            raise KeyNotAllowed(f"api_key_env {spec.api_key_env!r} is not a key this Bridge may "
                                f"use (BRIDGE_KEY_ENVS: {allowed})")
        key = secrets.get(spec.api_key_env)
        if not key:
            raise InvalidRequest(f"api_key_env {spec.api_key_env!r} is not set on the Bridge")
        return ModelChoice(name, base_url, key)
    # The default key only ever goes to the default endpoint.
    same_host = base_url == settings.openai_base_url
    return ModelChoice(name, base_url, (settings.openai_api_key if same_host else None) or NO_KEY)


class AgentFactory:
    """Creates AIAgents with the Bridge's toolsets, session store and memory scope."""

    def __init__(self, settings: BridgeSettings, scopes: MemoryScopes) -> None:
        self._settings = settings
        self._scopes = scopes
        self._session_db = hermes_state.SessionDB()

    def build(self, session_id: str, model: ModelChoice) -> Any:
        """A quiet agent for `session_id` (blocking: call it off the event loop)."""
        agent = run_agent.AIAgent(
            base_url=model.base_url,
            api_key=model.api_key,
            # "custom" makes hermes-agent's auxiliary tasks (context summaries) use this
            # same endpoint and model instead of hunting for OpenRouter/Nous keys.
            provider="custom",
            model=model.name,
            enabled_toolsets=list(self._settings.toolsets if model.toolsets is None
                                  else model.toolsets),
            quiet_mode=True,
            session_id=session_id,
            session_db=self._session_db,
            skip_context_files=True,
            max_iterations=self._settings.max_iterations,
        )
        agent.suppress_status_output = True
        agent._print_fn = _log_print  # hermes prints progress to stdout otherwise
        self._scopes.install(agent, session_id)
        return agent

    def close(self) -> None:
        self._session_db.close()


def refresh_system_prompt(agent: Any) -> None:
    """Rebuild the agent's system prompt from disk (its memory was edited) and make it the
    session's stored prompt; hermes-agent otherwise reuses the stored one for the session."""
    from agent.system_prompt import build_system_prompt, invalidate_system_prompt

    invalidate_system_prompt(agent)  # also reloads MEMORY.md / USER.md
    agent._cached_system_prompt = build_system_prompt(agent)
    if agent._session_db is not None:
        agent._session_db.update_system_prompt(agent.session_id, agent._cached_system_prompt)


def _log_print(*args: Any, **_: Any) -> None:
    logger.debug("hermes: %s", " ".join(str(a) for a in args))
