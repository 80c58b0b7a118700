"""What each workspace lets the app do, learnt from its answers: a workspace (or token) that
refuses the stream methods or the loading status is remembered, so every later turn goes
straight to the fallback, and the log says so once per workspace and feature."""

from __future__ import annotations

import logging

from slack_sdk.errors import SlackApiError

log = logging.getLogger(__name__)

STREAMING = "streaming"  # chat.startStream / appendStream / stopStream
STATUS = "status"  # assistant.threads.setStatus
SUGGESTED_PROMPTS = "suggested prompts"  # assistant.threads.setSuggestedPrompts
AGENT_SESSIONS = "agent sessions"  # agents.sessions.setStatus / rename (apps declared as agents)
THREAD_TITLES = "thread titles"  # assistant.threads.setTitle
# Errors that mean "not here, not for this app": asking again would get the same answer.
REFUSALS = frozenset({
    "unknown_method", "not_allowed", "not_allowed_token_type", "not_authorized", "missing_scope",
    "method_deprecated", "feature_not_enabled", "team_not_allowed", "access_denied",
})


class WorkspaceFeatures:
    def __init__(self) -> None:
        self._refused: set[tuple[str, str]] = set()

    def has(self, team: str, feature: str) -> bool:
        return (team, feature) not in self._refused

    def refused(self, team: str, feature: str, error: SlackApiError) -> bool:
        """Whether `error` is a refusal of `feature`; if so it is remembered (logged once)."""
        code = str(error.response.get("error") or "")
        if code not in REFUSALS:
            return False
        if (team, feature) not in self._refused:
            self._refused.add((team, feature))
            log.warning("slack workspace %s refuses %s (%s): using the fallback from now on",
                        team, feature, code)
        return True
