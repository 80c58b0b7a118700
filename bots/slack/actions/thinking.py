"""Show thinking (paginated) and Show summary: the clicks that open the read-only modals of
`render/pages.py`."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from core.conversation import views

from .. import ids
from ..inbound import Click
from ..render.pages import summary_modal, thinking_modal, thinking_pages
from ..services import SlackServices
from . import click_listener, message_here


class InsightListeners:
    def __init__(self, services: SlackServices) -> None:
        self._services = services

    def register(self, app: AsyncApp) -> None:
        app.action(ids.SHOW_THINKING)(click_listener(self._services, self._thinking, "show thinking"))
        app.action(ids.THINKING_PAGE_PATTERN)(click_listener(self._services, self._page, "thinking page"))
        app.action(ids.SHOW_SUMMARY)(click_listener(self._services, self._summary, "show summary"))

    async def _thinking(self, clicked: Click) -> None:
        (message_id,) = ids.unpack(clicked.value, 1)
        await message_here(clicked, message_id)
        pages = thinking_pages(await views.thinking_of(self._services.pool, message_id))
        await self._services.sender.open_view(clicked.trigger_id, thinking_modal(message_id, pages, 0))

    async def _page(self, clicked: Click) -> None:
        message_id, page = ids.unpack(clicked.value, 2)
        pages = thinking_pages(await views.thinking_of(self._services.pool, message_id))
        await self._services.sender.update_view(clicked.team, clicked.view_id or "",
                                                thinking_modal(message_id, pages, page))

    async def _summary(self, clicked: Click) -> None:
        summary = await message_here(clicked, ids.unpack(clicked.value, 1)[0])
        await self._services.sender.open_view(clicked.trigger_id, summary_modal(summary.content))
