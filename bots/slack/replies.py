"""Where the error boundary's words go: the thread, or only the user who clicked."""

from __future__ import annotations

from .blocks import Payload, section
from .boundary import Reply
from .inbound import Click
from .places import Place
from .services import Services


def in_thread(services: Services, place: Place) -> Reply:
    async def reply(text: str) -> None:
        await services.sender.post(place.team, place.channel, place.reply_thread,
                                   Payload(text, [section(text)]))
    return reply


def to_clicker(services: Services, click: Click) -> Reply:
    async def reply(text: str) -> None:
        if click.channel:
            await services.sender.ephemeral(click.team, click.channel, click.user, text, click.thread_ts)
    return reply


def to_user(services: Services, team: str, channel: str, user: str) -> Reply:
    async def reply(text: str) -> None:
        await services.sender.ephemeral(team, channel, user, text)
    return reply


async def unheard(text: str) -> None:
    """For work no user waits on (a tidy-up, suggested prompts): the boundary logs a failure."""
