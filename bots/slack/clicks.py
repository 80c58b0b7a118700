"""A click listener: ack at once, then the work in a tracked task whose refusals and errors
reach only the user who clicked.

This is where every click on a turn enters, so this is where "who may act" is asked: a
listener that acts on a turn names how its click finds the turn's asker, and a click by
anyone else (under CONVERSATION_ACTIONS=asker, and not a chat admin) is refused with
NotYours before its work changes anything (core.conversation.policy).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from slack_bolt.async_app import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext

from .inbound import Click
from .intake import typed
from .replies import to_clicker
from .services import Services

Work = Callable[[Click], Awaitable[None]]
AskerOf = Callable[[Click], Awaitable[str | None]]  # who started the turn a click acts on
Listener = Callable[[AsyncAck, AsyncBoltContext], Awaitable[None]]


def click_listener(services: Services, work: Work, what: str,
                   asker_of: AskerOf | None = None) -> Listener:
    """A listener for `work`; with `asker_of`, only the turn's asker and the admins may click."""
    async def gated(clicked: Click) -> None:
        if asker_of is not None:
            services.policy.check_act(clicked.user, await asker_of(clicked))
        await work(clicked)

    async def listener(ack: AsyncAck, context: AsyncBoltContext) -> None:
        await ack()
        clicked = typed(context, Click)
        services.background.spawn(gated(clicked), to_clicker(services, clicked), what)
    return listener
