"""The model and skill select menus of `/hermes model` and `/hermes skill`."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from core.conversation import commands

from . import ids
from .belongs import check_session
from .clicks import click_listener
from .commands import model_chosen, skill_chosen
from .inbound import Click
from .menus import parse_option
from .replies import to_clicker
from .services import Services


class SessionListeners:
    def __init__(self, services: Services) -> None:
        self._services = services

    def register(self, app: AsyncApp) -> None:
        listener = click_listener(self._services, self._choose, "choose model or skill")
        app.action(ids.SET_MODEL)(listener)
        app.action(ids.SET_SKILL)(listener)

    async def _choose(self, clicked: Click) -> None:
        session_id, chosen = parse_option(clicked.value)
        await check_session(clicked, session_id)
        catalogue = self._services.catalogue
        if clicked.action_id == ids.SET_MODEL:
            entry = await commands.choose_model(catalogue, session_id, chosen)
            text = model_chosen(entry.name, entry.id)
        else:
            skill = await commands.choose_skill(catalogue, session_id, chosen)
            text = skill_chosen(skill.name if skill else None)
        await to_clicker(self._services, clicked)(text)
