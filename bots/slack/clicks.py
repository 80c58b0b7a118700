"""A click listener: ack at once, then the work in a tracked task whose refusals and errors
reach only the user who clicked."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from slack_bolt.async_app import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext

from .inbound import Click
from .intake import typed
from .replies import to_clicker
from .services import Services

Work = Callable[[Click], Awaitable[None]]
Listener = Callable[[AsyncAck, AsyncBoltContext], Awaitable[None]]


def click_listener(services: Services, work: Work, what: str) -> Listener:
    async def listener(ack: AsyncAck, context: AsyncBoltContext) -> None:
        await ack()
        clicked = typed(context, Click)
        services.background.spawn(work(clicked), to_clicker(services, clicked), what)
    return listener
