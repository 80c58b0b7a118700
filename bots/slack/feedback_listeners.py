"""👍 / 👎 under an answer (a `feedback_buttons` element): stored as the clicker's rating of
that assistant message, replacing an earlier one, and acknowledged to them alone."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from core import feedback
from core.models import Platform

from . import ids
from .belongs import message_here
from .clicks import click_listener
from .inbound import Click
from .replies import to_clicker
from .services import Services


class FeedbackListeners:
    def __init__(self, services: Services) -> None:
        self._services = services

    def register(self, app: AsyncApp) -> None:
        app.action(ids.FEEDBACK)(click_listener(self._services, self._rate, "feedback"))

    async def _rate(self, clicked: Click) -> None:
        kind, message_id = ids.parse_feedback(clicked.value)
        await message_here(clicked, message_id)
        value = feedback.value_of(kind)
        await feedback.give(message_id, Platform.SLACK, clicked.user, value)
        await to_clicker(self._services, clicked)(feedback.THANKS[value])
