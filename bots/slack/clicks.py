"""A click listener: ack at once, then the work in a tracked task whose refusals and errors
reach only the user who clicked."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.async_app import AsyncAck

from .payloads import Click, click
from .replies import to_clicker
from .services import Services

Work = Callable[[Click], Awaitable[None]]
Listener = Callable[[AsyncAck, dict[str, Any]], Awaitable[None]]


def click_listener(services: Services, work: Work, what: str) -> Listener:
    async def listener(ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        clicked = click(body)
        services.background.spawn(work(clicked), to_clicker(services, clicked), what)
    return listener
