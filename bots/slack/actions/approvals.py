"""Tool approval clicks: Allow once, Allow in this conversation, Always allow, Deny.

Who may decide is the runtime's rule (`pool.decide` with the policy: the asker or a chat
admin whatever CONVERSATION_ACTIONS says, "always" an admin only), so the click carries no
asker check of its own; a refusal reaches only who clicked. The button's value is the pause
id, so a click after a restart finds the approval in the database. The first decision wins;
a later click learns why it changed nothing.
"""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from .. import ids
from ..inbound import Click
from ..intake import to_clicker
from ..services import SlackServices
from . import click_listener, pause_here


class ApprovalListeners:
    def __init__(self, services: SlackServices) -> None:
        self._services = services

    def register(self, app: AsyncApp) -> None:
        app.action(ids.APPROVAL_PATTERN)(click_listener(self._services, self._decide, "tool approval"))

    async def _decide(self, clicked: Click) -> None:
        (pause_id,) = ids.unpack(clicked.value, 1)
        await pause_here(clicked, pause_id)
        services = self._services
        outcome = await services.pool.decide(None, ids.decision_of(clicked.action_id), clicked.user,
                                             services.policy, pause_id=pause_id)
        if not outcome.accepted:
            await to_clicker(services.sender, clicked)(outcome.reason or "This approval is closed.")
