"""Where the error boundary's words go: the thread, or only the user who clicked."""

from __future__ import annotations

from .blocks import Payload, section
from .boundary import Reply
from .inbound import Click, Inbound, MessageEdit, MessageEvent, SlashCommand
from .places import Place, place_of
from .services import Services


def reply_to(services: Services, inbound: Inbound) -> Reply:
    """Where the error boundary tells about a request: who clicked or typed a command
    (privately), the thread of a message; nobody for the rest (the log has it)."""
    if isinstance(inbound, Click):
        return to_clicker(services, inbound)
    if isinstance(inbound, MessageEvent | MessageEdit):
        return in_thread(services, place_of(inbound.team, inbound.channel, inbound.ts,
                                            inbound.thread_ts, inbound.channel_type))
    if isinstance(inbound, SlashCommand):
        return to_user(services, inbound.team, inbound.channel, inbound.user)
    return unheard


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
